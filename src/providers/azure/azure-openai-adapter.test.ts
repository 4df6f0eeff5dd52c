import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertSseFixture, testContext, testTarget } from '../../../test/fakes/fixture-files.js';
import { createAzureOpenAIAdapter } from './azure-openai-adapter.js';

const fixtures = fileURLToPath(new URL('./__fixtures__/', import.meta.url));
const adapter = createAzureOpenAIAdapter();
const target = testTarget({
  provider: 'azure',
  baseUrl: 'https://my-resource.openai.azure.com/',
  upstreamModel: 'gpt-4o',
  apiKey: 'azure-key',
  settings: { deployment: 'prod-gpt4o' },
});
const context = testContext(target, { model: 'gpt-public' });

test('chat request: deployment path, api-version, api-key, body forwarded without gw fields', () => {
  const request = { model: 'gpt-public', messages: [{ role: 'user', content: 'hi' }], temperature: 0.2, gw_cache: true, logprobs: true };
  const upstream = adapter.translators.chat!.buildRequest(request, { ...context, stream: true });
  assert.equal(upstream.url, 'https://my-resource.openai.azure.com/openai/deployments/prod-gpt4o/chat/completions?api-version=2024-10-21');
  assert.equal(upstream.headers['api-key'], 'azure-key');
  assert.equal(upstream.headers.authorization, undefined);
  assert.deepEqual(JSON.parse(String(upstream.body)), {
    model: 'gpt-4o',
    messages: [{ role: 'user', content: 'hi' }],
    temperature: 0.2,
    logprobs: true,
    stream_options: { include_usage: true },
  });
  const versioned = testContext(testTarget({ ...target, settings: { apiVersion: '2025-01-01-preview' } }), { model: 'x' });
  const embedding = adapter.translators.embedding!.buildRequest({ model: 'x', input: 'a' }, { ...versioned, stream: false });
  assert.equal(embedding.url, 'https://my-resource.openai.azure.com/openai/deployments/gpt-4o/embeddings?api-version=2025-01-01-preview');
});

test('stream: prompt_filter_results chunks are dropped, the rest passes through, usage read', () => {
  const outcome = assertSseFixture(fixtures, 'chat.sse', 'chat.chunks.json', () => adapter.translators.chat!.createStreamTranslator!(context));
  assert.equal(outcome.events.length, 4);
  assert.ok(outcome.events.every((event) => !event.raw?.includes('prompt_filter_results')));
  assert.deepEqual(outcome.events.at(-1)?.usage, { inputTokens: 9, outputTokens: 2 });
});

test('errors: content filter and rate limit', () => {
  const filtered = adapter.parseError(
    400,
    { error: { message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.", type: null, param: 'prompt', code: 'content_filter', status: 400 } },
    {},
  );
  assert.equal(filtered.code, 'content_filtered');
  const limited = adapter.parseError(429, { error: { code: '429', message: 'Requests to the ChatCompletions_Create Operation have exceeded the rate limit.' } }, { 'retry-after': '3' });
  assert.equal(limited.code, 'upstream_rate_limited');
  assert.equal(limited.details?.retry_after_seconds, 3);
});
