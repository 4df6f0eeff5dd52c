import assert from 'node:assert/strict';
import { test } from 'node:test';
import { blendedPrice } from './blended-price.js';

test('blended price is exact integer pico-USD of input plus output', () => {
  assert.equal(blendedPrice({ inputPerMillion: '0.15', outputPerMillion: '0.6' }), 750_000_000_000);
  assert.equal(blendedPrice({ inputPerMillion: '0.000000000001' }), 1);
  assert.equal(blendedPrice({ perOcrPage: '0.01' }), undefined);
  assert.equal(blendedPrice(null), undefined);
});
