import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertMatchesFixture, assertSseFixture, readJsonFixture, testContext, testTarget } from '../../../test/fakes/fixture-files.js';
import type { ChatRequest } from '../../protocol/chat.js';
import type { EmbeddingRequest } from '../../protocol/embeddings.js';
import type { RerankRequest } from '../../protocol/rerank.js';
import { createCohereAdapter } from './cohere-adapter.js';

const fixtures = fileURLToPath(new URL('./__fixtures__/', import.meta.url));
const adapter = createCohereAdapter();
const chat = adapter.translators.chat!;
const target = testTarget({ provider: 'cohere', upstreamModel: 'command-a-03-2025', apiKey: 'co-secret' });
const context = testContext(target, { model: 'command-public' });
const responseContext = { ...context, contentType: 'application/json', raw: Buffer.alloc(0) };

test('chat request: roles, images, tool round trip, named tool_choice, sampling bounds', () => {
  const upstream = chat.buildRequest(readJsonFixture<ChatRequest>(fixtures, 'tools.request.json'), { ...context, stream: false });
  assert.equal(upstream.url, 'https://api.cohere.com/v2/chat');
  assert.equal(upstream.headers.authorization, 'Bearer co-secret');
  assert.deepEqual(JSON.parse(String(upstream.body)), readJsonFixture(fixtures, 'tools.upstream.json'));
});

test('chat response: tool call (tool_plan dropped) and text, billed usage', () => {
  const toolCall = chat.parseResponse(readJsonFixture(fixtures, 'tool-call.response.json'), responseContext);
  assert.deepEqual(toolCall.usage, { inputTokens: 37, outputTokens: 28 });
  assertMatchesFixture(fixtures, 'tool-call.completion.json', toolCall.body);
  const text = chat.parseResponse(readJsonFixture(fixtures, 'text.response.json'), responseContext);
  const body = text.body as { choices: Array<{ message: { content: string }; finish_reason: string }> };
  assert.equal(body.choices[0].message.content, 'LLMs are neural networks.');
  assert.equal(body.choices[0].finish_reason, 'stop');
});

test('stream: text', () => {
  const outcome = assertSseFixture(fixtures, 'text.sse', 'text.chunks.json', () => chat.createStreamTranslator!(context));
  assert.deepEqual(outcome.events.at(-1)?.usage, { inputTokens: 3, outputTokens: 2 });
});

test('stream: tool call start and argument deltas', () => {
  const outcome = assertSseFixture(fixtures, 'tool-call.sse', 'tool-call.chunks.json', () => chat.createStreamTranslator!(context));
  const args = outcome.events.flatMap((event) => event.chunk?.choices[0]?.delta.tool_calls ?? []).map((call) => call.function?.arguments ?? '');
  assert.equal(args.join(''), '{\n    "location": "Toronto"}');
});

test('embed: request and response', () => {
  const embedding = adapter.translators.embedding!;
  const request: EmbeddingRequest = { model: 'embed-public', input: ['hello', 'goodbye'] };
  const upstream = embedding.buildRequest(request, { ...context, stream: false });
  assert.equal(upstream.url, 'https://api.cohere.com/v2/embed');
  assert.deepEqual(JSON.parse(String(upstream.body)), {
    model: 'command-a-03-2025',
    texts: ['hello', 'goodbye'],
    input_type: 'search_document',
    embedding_types: ['float'],
  });
  const result = embedding.parseResponse(readJsonFixture(fixtures, 'embed.response.json'), { ...responseContext, request } as never);
  assert.deepEqual(result.usage, { inputTokens: 2 });
  assertMatchesFixture(fixtures, 'embed.canonical.json', result.body);
});

test('rerank: request, sorted results, documents from the request, search units', () => {
  const rerank = adapter.translators.rerank!;
  const request: RerankRequest = {
    model: 'rerank-public',
    query: 'capital of the US',
    documents: ['Carson City', 'Saipan', 'Charlotte Amalie', { text: 'Washington, D.C.' }, 'Capital punishment'],
    top_n: 3,
    return_documents: true,
  };
  const upstream = rerank.buildRequest(request, { ...context, stream: false });
  assert.equal(upstream.url, 'https://api.cohere.com/v2/rerank');
  assert.deepEqual(JSON.parse(String(upstream.body)), {
    model: 'command-a-03-2025',
    query: 'capital of the US',
    documents: ['Carson City', 'Saipan', 'Charlotte Amalie', 'Washington, D.C.', 'Capital punishment'],
    top_n: 3,
  });
  const result = rerank.parseResponse(readJsonFixture(fixtures, 'rerank.response.json'), { ...responseContext, request } as never);
  assert.deepEqual(result.usage, { searchUnits: 1 });
  assertMatchesFixture(fixtures, 'rerank.canonical.json', result.body);
});

test('errors: 429, 498 invalid token, 400', () => {
  const limited = adapter.parseError(429, { message: "You are using a Trial key, which is limited to 10 API calls / minute." }, { 'retry-after': '60' });
  assert.equal(limited.code, 'upstream_rate_limited');
  assert.equal(limited.details?.retry_after_seconds, 60);
  const invalid = adapter.parseError(498, { message: 'invalid api token' }, {});
  assert.equal(invalid.code, 'upstream_authentication');
  assert.equal(invalid.details?.upstream_status, 498);
  assert.equal(adapter.parseError(400, { message: 'invalid request: message must be at least 1 token long' }, {}).code, 'upstream_bad_request');
  assert.equal(adapter.parseError(400, { message: 'too many tokens: total number of tokens in the prompt cannot exceed 128000' }, {}).code, 'context_length_exceeded');
});
