import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertMatchesFixture, assertSseFixture, readJsonFixture, testContext, testTarget } from '../../../test/fakes/fixture-files.js';
import type { ChatRequest } from '../../protocol/chat.js';
import { decodeEmbeddingBase64, type EmbeddingRequest } from '../../protocol/embeddings.js';
import { createGeminiAdapter } from './gemini-adapter.js';

const fixtures = fileURLToPath(new URL('./__fixtures__/', import.meta.url));
const adapter = createGeminiAdapter();
const chat = adapter.translators.chat!;
const target = testTarget({ provider: 'gemini', upstreamModel: 'gemini-2.5-flash', apiKey: 'AIzaSyTestKey0000000000000000' });
const context = testContext(target, { model: 'gemini-public' });
const responseContext = { ...context, contentType: 'application/json', raw: Buffer.alloc(0) };

test('chat request: systemInstruction, images, function call round trip, tool config, generation config', () => {
  const request = readJsonFixture<ChatRequest>(fixtures, 'tools.request.json');
  const upstream = chat.buildRequest(request, { ...context, stream: false });
  assert.equal(upstream.url, 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent');
  assert.equal(upstream.headers['x-goog-api-key'], 'AIzaSyTestKey0000000000000000');
  assert.deepEqual(JSON.parse(String(upstream.body)), readJsonFixture(fixtures, 'tools.upstream.json'));
});

test('chat request: stream URL, tool_choice modes', () => {
  const request = readJsonFixture<ChatRequest>(fixtures, 'tools.request.json');
  const local = testContext(testTarget({ ...target, baseUrl: 'http://127.0.0.1:9/', upstreamModel: 'models/gemini-x' }), { model: 'g' });
  assert.equal(chat.buildRequest(request, { ...local, stream: true }).url, 'http://127.0.0.1:9/v1beta/models/gemini-x:streamGenerateContent?alt=sse');
  for (const [choice, mode] of [['auto', 'AUTO'], ['none', 'NONE'], ['required', 'ANY']] as const) {
    const body = JSON.parse(String(chat.buildRequest({ ...request, tool_choice: choice }, { ...context, stream: false }).body));
    assert.deepEqual(body.toolConfig, { functionCallingConfig: { mode } });
  }
});

test('chat response: function call, thoughts dropped, usage split', () => {
  const result = chat.parseResponse(readJsonFixture(fixtures, 'function-call.response.json'), responseContext);
  assert.deepEqual(result.usage, { inputTokens: 20, cachedInputTokens: 100, outputTokens: 8, reasoningTokens: 20 });
  assertMatchesFixture(fixtures, 'function-call.completion.json', result.body);
});

test('chat response: a blocked prompt is content_filter', () => {
  const result = chat.parseResponse(readJsonFixture(fixtures, 'blocked.response.json'), responseContext);
  const body = result.body as { choices: Array<{ finish_reason: string; message: { content: unknown } }> };
  assert.equal(body.choices[0].finish_reason, 'content_filter');
  assert.equal(body.choices[0].message.content, null);
});

test('stream: text with cumulative usage', () => {
  const outcome = assertSseFixture(fixtures, 'text.sse', 'text.chunks.json', () => chat.createStreamTranslator!(context));
  assert.deepEqual(outcome.events.at(-1)?.usage, { inputTokens: 10, outputTokens: 7, reasoningTokens: 12 });
});

test('stream: whole function calls become indexed tool_calls deltas', () => {
  const outcome = assertSseFixture(fixtures, 'function-call.sse', 'function-call.chunks.json', () => chat.createStreamTranslator!(context));
  const finish = outcome.events.find((event) => event.chunk?.choices[0]?.finish_reason);
  assert.equal(finish?.chunk?.choices[0].finish_reason, 'tool_calls');
});

test('stream: a safety stop is content_filter', () => {
  const outcome = assertSseFixture(fixtures, 'safety.sse', 'safety.chunks.json', () => chat.createStreamTranslator!(context));
  assert.ok(outcome.events.some((event) => event.chunk?.choices[0]?.finish_reason === 'content_filter'));
});

test('embeddings: batchEmbedContents both ways, base64 on request', () => {
  const embedding = adapter.translators.embedding!;
  const request: EmbeddingRequest = { model: 'emb', input: ['hello world', 'second'], dimensions: 3, encoding_format: 'base64' };
  const upstream = embedding.buildRequest(request, { ...context, stream: false });
  assert.equal(upstream.url, 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:batchEmbedContents');
  assert.deepEqual(JSON.parse(String(upstream.body)), {
    requests: [
      { model: 'models/gemini-2.5-flash', content: { parts: [{ text: 'hello world' }] }, outputDimensionality: 3 },
      { model: 'models/gemini-2.5-flash', content: { parts: [{ text: 'second' }] }, outputDimensionality: 3 },
    ],
  });
  const result = embedding.parseResponse(readJsonFixture(fixtures, 'embed.upstream-response.json'), { ...responseContext, request } as never);
  const body = result.body as { data: Array<{ index: number; embedding: string }>; usage: { prompt_tokens: number } };
  assert.deepEqual(decodeEmbeddingBase64(body.data[1].embedding), [0, 0.125, -1]);
  assert.equal(body.data[1].index, 1);
  assert.equal(body.usage.prompt_tokens, 3);
  assert.deepEqual(result.usage, { inputTokens: 3 });
});

test('errors: RESOURCE_EXHAUSTED with RetryInfo, auth, invalid argument', () => {
  const limited = adapter.parseError(
    429,
    { error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '31s' }] } },
    {},
  );
  assert.equal(limited.code, 'upstream_rate_limited');
  assert.equal(limited.details?.retry_after_seconds, 31);
  assert.equal(adapter.parseError(403, { error: { code: 403, message: 'API key not valid', status: 'PERMISSION_DENIED' } }, {}).code, 'upstream_authentication');
  const tooLong = adapter.parseError(400, { error: { code: 400, message: 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).', status: 'INVALID_ARGUMENT' } }, {});
  assert.equal(tooLong.code, 'context_length_exceeded');
  assert.equal(adapter.parseError(503, { error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }, {}).code, 'upstream_unavailable');
});
