import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chatRequestSchema } from './chat.js';
import { isCommonChatRequest } from './chat-quick-check.js';

const base = () => ({
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You are a concise assistant.' },
    { role: 'user', content: 'Hello there' },
  ],
});

/** Deep equality that ignores key order (zod puts the schema's keys first; the quick path keeps the client's order). */
function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, index) => sameValue(item, b[index]));
  }
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
    const keysA = Object.keys(a);
    const keysB = Object.keys(b);
    return keysA.length === keysB.length && keysA.every((key) => key in b && sameValue((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
  }
  return Object.is(a, b) || (a === 0 && b === 0);
}

test('chat quick check: the common shapes pass, and zod accepts each of them as the same body', () => {
  const bodies: Array<Record<string, unknown>> = [
    base(),
    { ...base(), stream: true, stream_options: { include_usage: true }, max_tokens: 128, temperature: 0.2, user: 'u-1' },
    { ...base(), temperature: 0, top_p: 1, n: 128, seed: -7, stop: ['a', 'b', 'c', 'd'], presence_penalty: -2, frequency_penalty: 2 },
    { ...base(), max_completion_tokens: 1, stop: 'END', stream: null, user: null, temperature: null, stream_options: null },
    { ...base(), logprobs: true, parallel_tool_calls: false, metadata: { anything: [1, 2] } },
    { model: 'm', messages: [{ role: 'assistant', content: '', name: 'bot', refusal: null }] },
    { model: 'm', messages: [{ role: 'developer', content: 'Be brief.' }, { role: 'tool', content: '42' }] },
    { ...base(), stream_options: { include_usage: false, extra: 1 } },
    { ...base(), user: 'x'.repeat(200) },
  ];
  for (const body of bodies) {
    assert.equal(isCommonChatRequest(body), true, JSON.stringify(body));
    const parsed = chatRequestSchema.safeParse(body);
    assert.ok(parsed.success, JSON.stringify(body));
    assert.ok(sameValue(parsed.data, body), JSON.stringify(body));
  }
});

test('chat quick check: fields it does not check by hand, and values out of bounds, go to zod', () => {
  const refused: unknown[] = [
    null,
    [],
    'text',
    { messages: base().messages },
    { ...base(), model: '' },
    { ...base(), model: 5 },
    { ...base(), messages: [] },
    { ...base(), messages: 'hi' },
    { ...base(), messages: [null] },
    { ...base(), messages: [[]] },
    { ...base(), messages: [{ role: 'robot', content: 'x' }] },
    { ...base(), messages: [{ content: 'x' }] },
    { ...base(), messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }] },
    { ...base(), messages: [{ role: 'user', content: 7 }] },
    { ...base(), messages: [{ role: 'user' }] },
    { ...base(), messages: [{ role: 'user', content: null }] },
    { ...base(), messages: [{ role: 'assistant', content: null, name: 'bot' }] },
    { ...base(), messages: [{ role: 'user', content: 'x', name: 3 }] },
    { ...base(), messages: [{ role: 'assistant', content: null, tool_calls: [] }] },
    { ...base(), messages: [{ role: 'tool', content: 'x', tool_call_id: 'c1' }] },
    { ...base(), temperature: 2.01 },
    { ...base(), temperature: -0.1 },
    { ...base(), temperature: '1' },
    { ...base(), top_p: 1.5 },
    { ...base(), max_tokens: 0 },
    { ...base(), max_tokens: 1.5 },
    { ...base(), max_tokens: 2 ** 60 },
    { ...base(), max_completion_tokens: 0 },
    { ...base(), n: 129 },
    { ...base(), seed: 0.5 },
    { ...base(), stream: 'yes' },
    { ...base(), stream_options: { include_usage: 'yes' } },
    { ...base(), stream_options: [] },
    { ...base(), stop: ['a', 'b', 'c', 'd', 'e'] },
    { ...base(), stop: [1] },
    { ...base(), presence_penalty: 3 },
    { ...base(), user: 'x'.repeat(201) },
    { ...base(), tools: [] },
    { ...base(), tool_choice: 'auto' },
    { ...base(), response_format: { type: 'text' } },
    { ...base(), gw_cache: true },
    { ...base(), gw_prompt_template_id: null },
    { ...base(), gw_guardrail_ids: [] },
  ];
  for (const body of refused) assert.equal(isCommonChatRequest(body), false, JSON.stringify(body));
});

/** A small deterministic generator (mulberry32), so a failure names a seed that reproduces it. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('chat quick check: never accepts a body zod refuses or would change (20,000 generated bodies)', () => {
  const next = random(20261126);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)];
  const values: readonly unknown[] = [
    null, true, false, 0, -0, 1, -1, 2, 2.5, -2, -2.5, 0.5, 128, 129, 2 ** 53, 2 ** 53 + 2, -(2 ** 60), 1e-9,
    '', 'x', 'user', 'auto', 'x'.repeat(200), 'x'.repeat(201), [], ['a'], ['a', 'b', 'c', 'd', 'e'], [1], [null], {},
    { include_usage: true }, { include_usage: 1 }, { type: 'text' },
  ];
  const fields = [
    'model', 'messages', 'temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'max_tokens', 'max_completion_tokens',
    'n', 'seed', 'stream', 'stream_options', 'stop', 'user', 'tools', 'gw_cache', 'logprobs', 'extra_field',
  ];
  const messageFields = ['role', 'content', 'name', 'tool_call_id', 'tool_calls', 'refusal'];
  const roles = ['system', 'user', 'assistant', 'tool', 'developer', 'function', 'robot', 5, null];
  let accepted = 0;
  for (let round = 0; round < 20_000; round++) {
    const body: Record<string, unknown> = base();
    if (next() < 0.3) {
      const count = Math.floor(next() * 3);
      body.messages = Array.from({ length: count }, () => {
        const message: Record<string, unknown> = { role: pick(roles) };
        for (const field of messageFields) if (next() < 0.25) message[field] = field === 'role' ? pick(roles) : pick(values);
        return message;
      });
    }
    const changes = Math.floor(next() * 4);
    for (let change = 0; change < changes; change++) {
      const field = pick(fields);
      if (next() < 0.15) delete body[field];
      else body[field] = pick(values);
    }
    if (!isCommonChatRequest(body)) continue;
    accepted++;
    const parsed = chatRequestSchema.safeParse(body);
    assert.ok(parsed.success, `round ${round}: accepted but zod refuses ${JSON.stringify(body)}`);
    assert.ok(sameValue(parsed.data, body), `round ${round}: zod would change ${JSON.stringify(body)}`);
  }
  // The generator must exercise the accepting side too, or the comparison proves nothing.
  assert.ok(accepted > 2_000, `only ${accepted} generated bodies were accepted`);
});
