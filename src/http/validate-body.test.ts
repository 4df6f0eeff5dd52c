import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.js';
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
