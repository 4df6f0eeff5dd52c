import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.js';
import { countEmbeddingTokens, embeddingInputTexts } from './embedding-shapes.js';

test('token-array embedding input is decoded to the text it encodes', () => {
  assert.deepEqual(embeddingInputTexts([15339, 1917]), ['hello world']);
  assert.deepEqual(embeddingInputTexts([[15339], [1917]]), ['hello', ' world']);
  assert.equal(countEmbeddingTokens(['hello world']), 2);
});

test('a token id outside the vocabulary is a 400 on input, not a server error', () => {
  assert.throws(
    () => embeddingInputTexts([15339, 999_999]),
    (error: unknown) => error instanceof GatewayError && error.status === 400 && error.code === 'invalid_request' && error.param === 'input',
  );
});
