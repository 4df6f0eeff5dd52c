import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  assertMatchesFixture,
  assertSseFixture,
  readJsonFixture,
  testContext,
  testTarget,
} from '../../../test/fakes/fixture-files.js';
import type { ChatRequest } from '../../protocol/chat.js';
import { createAnthropicAdapter } from './anthropic-adapter.js';

const fixtures = fileURLToPath(new URL('./__fixtures__/', import.meta.url));
const adapter = createAnthropicAdapter();
const chat = adapter.translators.chat!;
const target = testTarget({ provider: 'anthropic', upstreamModel: 'claude-sonnet-4-5', apiKey: 'sk-ant-secret' });
const context = testContext(target, { model: 'claude-public' });

test('chat request: system hoisting, images, tool round trip, tool_choice, stops, capped temperature', () => {
  const request = readJsonFixture<ChatRequest>(fixtures, 'tools.request.json');
  const upstream = chat.buildRequest(request, { ...context, stream: false });
  assert.equal(upstream.method, 'POST');
  assert.equal(upstream.url, 'https://api.anthropic.com/v1/messages');
  assert.equal(upstream.headers['x-api-key'], 'sk-ant-secret');
  assert.equal(upstream.headers['anthropic-version'], '2023-06-01');
  assert.deepEqual(JSON.parse(String(upstream.body)), readJsonFixture(fixtures, 'tools.upstream.json'));
});

test('chat request: default max_tokens, tool_choice none, stream flag, base URL with /v1', () => {
  const request = readJsonFixture<ChatRequest>(fixtures, 'basic.request.json');
  const streamContext = testContext(testTarget({ ...target, baseUrl: 'http://127.0.0.1:9/v1/' }), { model: 'claude-public' });
  const upstream = chat.buildRequest(request, { ...streamContext, stream: true });
  assert.equal(upstream.url, 'http://127.0.0.1:9/v1/messages');
  assert.deepEqual(JSON.parse(String(upstream.body)), readJsonFixture(fixtures, 'basic.upstream.json'));
});

test('tool_choice none is sent when tools are present', () => {
  const request = { ...readJsonFixture<ChatRequest>(fixtures, 'tools.request.json'), tool_choice: 'none', parallel_tool_calls: undefined } as ChatRequest;
  const body = JSON.parse(String(chat.buildRequest(request, { ...context, stream: false }).body));
  assert.deepEqual(body.tool_choice, { type: 'none' });
  const named = { ...request, tool_choice: { type: 'function', function: { name: 'get_weather' } } } as ChatRequest;
  assert.deepEqual(JSON.parse(String(chat.buildRequest(named, { ...context, stream: false }).body)).tool_choice, {
    type: 'tool',
    name: 'get_weather',
  });
});

test('chat response: text, tool_use, thinking dropped, cache usage split', () => {
  const body = readJsonFixture(fixtures, 'tool-use.response.json');
  const result = chat.parseResponse(body, { ...context, contentType: 'application/json', raw: Buffer.from('') });
  assert.deepEqual(result.usage, { inputTokens: 472, outputTokens: 89, cachedInputTokens: 2048, cacheWriteInputTokens: 100 });
  assertMatchesFixture(fixtures, 'tool-use.completion.json', result.body);
});

test('stream: text with usage from message_start and message_delta', () => {
  const outcome = assertSseFixture(fixtures, 'text.sse', 'text.chunks.json', () => chat.createStreamTranslator!(context));
  const last = outcome.events.at(-1)!;
  assert.equal(last.usageOnly, true);
  assert.deepEqual(last.usage, { inputTokens: 25, outputTokens: 15, cachedInputTokens: 10 });
});

test('stream: thinking dropped, tool-call argument deltas indexed per tool', () => {
  const outcome = assertSseFixture(fixtures, 'tool-use.sse', 'tool-use.chunks.json', () => chat.createStreamTranslator!(context));
  const argumentsByIndex = new Map<number, string>();
  for (const event of outcome.events) {
    for (const call of event.chunk?.choices[0]?.delta.tool_calls ?? []) {
      argumentsByIndex.set(call.index, (argumentsByIndex.get(call.index) ?? '') + (call.function?.arguments ?? ''));
    }
  }
  assert.deepEqual(Object.fromEntries(argumentsByIndex), { 0: '{"location": "San Francisco, CA"}', 1: '{"tz":"PST"}' });
});

test('stream: an error event ends the stream with an upstream error', () => {
  const outcome = assertSseFixture(fixtures, 'overloaded.sse', 'overloaded.chunks.json', () => chat.createStreamTranslator!(context));
  assert.equal(outcome.error?.code, 'upstream_unavailable');
});

test('errors: statuses and bodies map to upstream codes without leaking credentials', () => {
  const rateLimited = adapter.parseError(
    429,
    { type: 'error', error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' } },
    { 'retry-after': '12' },
  );
  assert.equal(rateLimited.code, 'upstream_rate_limited');
  assert.equal(rateLimited.details?.retry_after_seconds, 12);
  assert.equal(rateLimited.details?.upstream_status, 429);
  assert.equal(adapter.parseError(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, {}).code, 'upstream_unavailable');
  assert.equal(adapter.parseError(408, {}, {}).code, 'upstream_request_timeout');
  const auth = adapter.parseError(401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key sk-ant-api03-abcdefghijkl' } }, {});
  assert.equal(auth.code, 'upstream_authentication');
  assert.doesNotMatch(auth.message, /sk-ant/);
  const tooLong = adapter.parseError(400, { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 208310 tokens > 200000 maximum' } }, {});
  assert.equal(tooLong.code, 'context_length_exceeded');
  const bad = adapter.parseError(400, { type: 'error', error: { type: 'invalid_request_error', message: 'see https://internal.example/x for max_tokens' } }, {});
  assert.equal(bad.code, 'upstream_bad_request');
  assert.match(bad.message, /\[redacted\]/);
  assert.doesNotMatch(bad.message, /internal\.example/);
});
