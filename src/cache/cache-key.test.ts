import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cacheKey, canonicalJson } from './cache-key.js';

const base = { orgId: 'org-a', operation: 'chat', model: 'm' };
const request = { model: 'm', messages: [{ role: 'user', content: 'hi' }], temperature: 0.2 };

test('canonical JSON sorts keys at every depth', () => {
  assert.equal(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } }), '{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}');
});

test('the key is stable across key order and ignores transport, attribution and gw_* fields', () => {
  const key = cacheKey({ ...base, request });
  assert.match(key, /^[0-9a-f]{64}$/);
  assert.equal(cacheKey({ ...base, request: { temperature: 0.2, messages: request.messages, model: 'm' } }), key);
  assert.equal(
    cacheKey({ ...base, request: { ...request, stream: true, stream_options: { include_usage: true }, user: 'u1', gw_cache: true, gw_guardrail_ids: [] } }),
    key,
  );
  assert.equal(cacheKey({ ...base, request: { ...request, seed: null } }), key, 'null means default');
});

test('every answer-affecting parameter changes the key', () => {
  const key = cacheKey({ ...base, request });
  for (const change of [
    { temperature: 0.3 },
    { top_p: 0.5 },
    { n: 2 },
    { stop: ['x'] },
    { max_tokens: 10 },
    { seed: 1 },
    { presence_penalty: 1 },
    { frequency_penalty: 1 },
    { response_format: { type: 'json_object' } },
    { tools: [{ type: 'function', function: { name: 'f' } }] },
    { tool_choice: 'none' },
    { messages: [{ role: 'user', content: 'hi!' }] },
    { some_future_parameter: true },
  ]) {
    assert.notEqual(cacheKey({ ...base, request: { ...request, ...change } }), key, JSON.stringify(change));
  }
  assert.notEqual(cacheKey({ ...base, model: 'other', request }), key);
  assert.notEqual(cacheKey({ ...base, operation: 'completion', request }), key);
});

test('orgs never share a key', () => {
  assert.notEqual(cacheKey({ ...base, request }), cacheKey({ ...base, orgId: 'org-b', request }));
});
