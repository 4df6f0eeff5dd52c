import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { request } from 'undici';
import { GatewayError } from '../errors/gateway-error.js';
import type { AlertChannel } from './channel-types.js';
import { parseChannelConfig, toChannelPatch } from './parse-channel-input.js';

const url = 'https://hooks.example.com/gw';
const allowEveryUrl = { checkUrl: async (value: string) => ({ url: new URL(value), allowedByTestMode: false, addresses: [] }) };

function rejection(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof GatewayError);
    return error;
  }
  assert.fail('expected a 400');
}

/** Every character a header value may hold: tab, space and visible ASCII. */
const EVERY_ALLOWED_CHARACTER = `\t ${Array.from({ length: 0x7e - 0x21 + 1 }, (_, index) => String.fromCharCode(0x21 + index)).join('')}`;

test('webhook header values that undici cannot send are rejected, naming config.headers.<name>', () => {
  for (const value of ['é€', '€', 'é', 'caf\u00e9', 'a\u0001b', 'a\u007fb', 'line\nbreak', 'nul\u0000']) {
    const error = rejection(() => parseChannelConfig('webhook', { url, headers: { 'X-A': value } }));
    assert.equal(error.code, 'invalid_request');
    assert.equal(error.param, 'config.headers.X-A', JSON.stringify(value));
    assert.match(error.message, /'config\.headers\.X-A'.*visible ASCII/);
  }
});

test('webhook header names must be RFC 9110 tokens, and the error says so', () => {
  for (const name of ['Bad Header', 'X-É', 'X:A', '']) {
    const error = rejection(() => parseChannelConfig('webhook', { url, headers: { [name]: 'v' } }));
    assert.equal(error.param, `config.headers.${name}`);
    assert.match(error.message, /HTTP tokens/);
  }
});

test('visible ASCII, spaces and tabs are accepted', () => {
  const config = parseChannelConfig('webhook', { url, headers: { 'X-Every': EVERY_ALLOWED_CHARACTER, "X-Token!#$%&'*+.^_`|~": 'Bearer abc.def' } });
  assert.equal((config as { headers: Record<string, string> }).headers['X-Every'], EVERY_ALLOWED_CHARACTER);
});

test('a PATCH that sets an unsendable header value is rejected the same way', async () => {
  const current = { id: 'c1', orgId: 'o1', name: 'hook', type: 'webhook', config: { url }, isActive: true, events: [], createdAt: 0, updatedAt: 0 } as AlertChannel;
  await assert.rejects(toChannelPatch(allowEveryUrl, current, { config: { headers: { 'X-A': 'é€' } } }), (error: unknown) => {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.param, 'config.headers.X-A');
    return true;
  });
});

test('undici sends every accepted character and refuses the value the validator now rejects', async (t) => {
  const seen: string[] = [];
  const server = createServer((incoming, response) => {
    seen.push(String(incoming.headers['x-every']));
    response.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const sent = await request(origin, { method: 'POST', body: '{}', headers: { 'x-every': EVERY_ALLOWED_CHARACTER }, reset: true });
  await sent.body.text();
  assert.equal(sent.statusCode, 200);
  // The receiver trims the optional whitespace around a field value (RFC 9110 §5.5).
  assert.equal(seen[0], EVERY_ALLOWED_CHARACTER.trim());

  await assert.rejects(request(origin, { method: 'POST', body: '{}', headers: { 'x-a': 'é€' }, reset: true }), /invalid x-a header/);
});
