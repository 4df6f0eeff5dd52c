import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.js';
import { chatRequestSchema } from '../protocol/chat.js';
import { completionRequestSchema } from '../protocol/completions.js';
import { embeddingRequestSchema } from '../protocol/embeddings.js';
import { moderationRequestSchema } from '../protocol/moderations.js';
import { ocrRequestSchema } from '../protocol/ocr.js';
import { validateBody } from './validate-body.js';

const schema = z.object({ model: z.string(), messages: z.array(z.object({ role: z.string(), content: z.string() })) });

function refusal(body: unknown): GatewayError {
  try {
    validateBody(schema, body);
  } catch (error) {
    assert.ok(error instanceof GatewayError);
    return error;
  }
  assert.fail('the body was accepted');
}

test('validate body: a field that was not sent is reported missing, one sent with the wrong type as invalid', () => {
  const missing = refusal({ model: 'm' });
  assert.equal(missing.message, "Missing required parameter: 'messages'.");
  assert.equal(missing.param, 'messages');
  const wrongType = refusal({ model: 'm', messages: 'hello' });
  assert.match(wrongType.message, /^Invalid value for 'messages': /);
  assert.equal(wrongType.param, 'messages');
  const nestedMissing = refusal({ model: 'm', messages: [{ role: 'user' }] });
  assert.equal(nestedMissing.message, "Missing required parameter: 'messages.0.content'.");
  const nestedWrongType = refusal({ model: 'm', messages: [{ role: 'user', content: 7 }] });
  assert.match(nestedWrongType.message, /^Invalid value for 'messages\.0\.content': /);
});

test('validate body: a missing field whose schema is a union, an enum or a refinement is still reported missing', () => {
  const unionSchema = z.object({
    input: z.union([z.string(), z.array(z.string())]),
    role: z.enum(['user', 'assistant']).optional(),
    messages: z.array(z.object({ role: z.enum(['user', 'assistant']), content: z.string() })).optional(),
    name: z.string().refine((value) => value.length > 2, 'too short').optional(),
  });
  const messageOf = (body: unknown) => {
    try {
      validateBody(unionSchema, body);
    } catch (error) {
      assert.ok(error instanceof GatewayError);
      return { message: error.message, param: error.param };
    }
    assert.fail('the body was accepted');
  };
  assert.deepEqual(messageOf({}), { message: "Missing required parameter: 'input'.", param: 'input' });
  assert.deepEqual(messageOf({ input: 'x', messages: [{ content: 'hi' }] }), { message: "Missing required parameter: 'messages.0.role'.", param: 'messages.0.role' });
  assert.match(messageOf({ input: 5 }).message, /^Invalid value for 'input': /);
  assert.match(messageOf({ input: 'x', role: 'robot' }).message, /^Invalid value for 'role': Invalid option/);
  assert.match(messageOf({ input: 'x', name: 'ab' }).message, /^Invalid value for 'name': too short\.$/);
  assert.match(messageOf({ input: null }).message, /^Invalid value for 'input': /, 'null was sent, so it is not missing');
});

test('validate body: a value of the wrong type inside a record or for an optional field is invalid, never missing', () => {
  const recordSchema = z.object({ org_id: z.string().optional(), config: z.object({ headers: z.record(z.string(), z.string()) }).optional() });
  const messageOf = (body: unknown) => {
    try {
      validateBody(recordSchema, body);
    } catch (error) {
      assert.ok(error instanceof GatewayError);
      return { message: error.message, param: error.param };
    }
    assert.fail('the body was accepted');
  };
  const header = messageOf({ config: { headers: { X: 1 } } });
  assert.match(header.message, /^Invalid value for 'config\.headers\.X': /);
  assert.equal(header.param, 'config.headers.X');
  const orgId = messageOf({ org_id: 123 });
  assert.match(orgId.message, /^Invalid value for 'org_id': /);
  assert.equal(orgId.param, 'org_id');
});

test('validate body: the API request schemas report an absent union field as missing and a wrong one as invalid', () => {
  const messageOf = (schema: z.ZodType, body: unknown) => {
    try {
      validateBody(schema, body);
    } catch (error) {
      assert.ok(error instanceof GatewayError);
      assert.equal(error.code, 'invalid_request');
      return `${error.param}: ${error.message}`;
    }
    assert.fail('the body was accepted');
  };
  assert.equal(messageOf(completionRequestSchema, { model: 'm' }), "prompt: Missing required parameter: 'prompt'.");
  assert.equal(messageOf(embeddingRequestSchema, { model: 'm' }), "input: Missing required parameter: 'input'.");
  assert.equal(messageOf(moderationRequestSchema, { model: 'm' }), "input: Missing required parameter: 'input'.");
  assert.equal(messageOf(ocrRequestSchema, { model: 'm' }), "document: Missing required parameter: 'document'.");
  assert.equal(messageOf(chatRequestSchema, { model: 'm', messages: [{ content: 'hi' }] }), "messages.0.role: Missing required parameter: 'messages.0.role'.");
  assert.match(messageOf(completionRequestSchema, { model: 'm', prompt: 5 }), /^prompt: Invalid value for 'prompt': /);
  assert.match(messageOf(chatRequestSchema, { model: 'm', messages: [{ role: 'robot', content: 'hi' }] }), /^messages\.0\.role: Invalid value for 'messages\.0\.role': Invalid option/);
});
