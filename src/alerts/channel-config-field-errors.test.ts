import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayError } from '../errors/gateway-error.js';
import { parseChannelConfig } from './parse-channel-input.js';

function refusal(config: Record<string, unknown>): GatewayError {
  try {
    parseChannelConfig('webhook', config);
  } catch (error) {
    assert.ok(error instanceof GatewayError);
    return error;
  }
  assert.fail('the config was accepted');
}

test('channel config: a field sent with the wrong type is an invalid value, an absent one is missing', () => {
  const wrongType = refusal({ url: 'https://hooks.example.com/x', headers: { 'X-Team': 1 } });
  assert.match(wrongType.message, /^Invalid value for 'config\.headers\.X-Team': /);
  assert.equal(wrongType.param, 'config.headers.X-Team');
  const missing = refusal({});
  assert.equal(missing.message, "Missing required parameter: 'config.url' (required for a webhook channel).");
  assert.equal(missing.param, 'config.url');
});
