import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAwsEventStreamDecoder } from '../../src/lib/aws-event-stream.js';
import type { GatewayCall, Outcome, StreamEvent } from '../../src/pipeline/stage.js';
import type { Operation } from '../../src/protocol/endpoints.js';
import { createAnthropicAdapter } from '../../src/providers/anthropic/anthropic-adapter.js';
import { createBedrockAdapter } from '../../src/providers/bedrock/bedrock-adapter.js';
import { createCohereAdapter } from '../../src/providers/cohere/cohere-adapter.js';
import { createGeminiAdapter } from '../../src/providers/gemini/gemini-adapter.js';
import { createHttpProvider } from '../../src/providers/http/create-http-provider.js';
import type { ProviderAdapter } from '../../src/providers/http/provider-adapter.js';
import { createUpstreamClient } from '../../src/providers/http/upstream-client.js';
import { createMistralOcrAdapter } from '../../src/providers/mistral/mistral-ocr-adapter.js';
import { createOpenAIMediaAdapter } from '../../src/providers/openai/openai-media-adapter.js';
import { startFakeAnthropic } from './fake-anthropic.js';
import { startFakeBedrock } from './fake-bedrock.js';
import { startFakeCohere } from './fake-cohere.js';
import { startFakeGemini } from './fake-gemini.js';
import { startFakeMistralOcr } from './fake-mistral-ocr.js';
import { startFakeOpenAIMedia } from './fake-openai-media.js';
import type { FakeUpstream } from './fake-upstream.js';
import { testTarget } from './fixture-files.js';

// Adapters driven through the real upstream transport against the fakes: proves the fakes speak
// what the translators expect, over real sockets with split reads.
const client = createUpstreamClient();
const fakes: Record<string, FakeUpstream> = {};

before(async () => {
  [fakes.anthropic, fakes.gemini, fakes.cohere, fakes.bedrock, fakes.mistral, fakes.openai] = await Promise.all([
    startFakeAnthropic(),
    startFakeGemini(),
    startFakeCohere(),
    startFakeBedrock(),
    startFakeMistralOcr(),
    startFakeOpenAIMedia(),
  ]);
});
after(async () => {
  await Promise.all(Object.values(fakes).map((fake) => fake.close()));
  await client.close();
});

function invoke(adapter: ProviderAdapter, fake: FakeUpstream, operation: Operation, request: Record<string, unknown>, options: { stream?: boolean; settings?: Record<string, string> } = {}): Promise<Outcome> {
  const provider = createHttpProvider(adapter, client, { 'aws-eventstream': createAwsEventStreamDecoder });
  const call = {
    requestId: 'req-fake',
    operation,
    auth: {} as GatewayCall['auth'],
    model: 'public-model',
    request,
    stream: options.stream ?? false,
    includeUsage: true,
    user: undefined,
    signal: new AbortController().signal,
    startedAt: 0,
    record: { headers: {} },
  } as GatewayCall;
  const target = testTarget({ provider: adapter.id, baseUrl: adapter.id === 'openai' ? `${fake.baseUrl}/v1` : fake.baseUrl, upstreamModel: 'upstream-model', apiKey: 'fake-key', settings: options.settings ?? {} });
  return provider.invoke({ call, target, signal: call.signal });
}

async function collect(outcome: Outcome): Promise<StreamEvent[]> {
  assert.equal(outcome.kind, 'stream');
  const events: StreamEvent[] = [];
  if (outcome.kind === 'stream') for await (const event of outcome.events) events.push(event);
  return events;
}

const streamedText = (events: StreamEvent[]) => events.map((event) => event.chunk?.choices[0]?.delta.content ?? '').join('');
const chat = { model: 'public-model', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hello there' }] };
const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];

for (const [name, adapter, settings] of [
  ['anthropic', createAnthropicAdapter(), {}],
  ['gemini', createGeminiAdapter(), {}],
  ['cohere', createCohereAdapter(), {}],
  ['bedrock', createBedrockAdapter(), { region: 'us-east-1', accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }],
] as const) {
  test(`${name}: chat, JSON and streamed`, async () => {
    const outcome = await invoke(adapter, fakes[name], 'chat', chat, { settings });
    assert.equal(outcome.kind, 'json');
    const body = (outcome as { body: { choices: Array<{ message: { content: string } }>; model: string } }).body;
    assert.equal(body.choices[0].message.content, 'Echo: hello there');
    assert.equal(body.model, 'public-model');
    assert.ok((outcome as { usage?: object }).usage);
    const events = await collect(await invoke(adapter, fakes[name], 'chat', chat, { stream: true, settings }));
    assert.equal(streamedText(events), 'Echo: hello there');
    assert.equal(events.at(-1)?.usageOnly, true);
  });
}

test('anthropic and gemini: tool calls, JSON and streamed', async () => {
  for (const [adapter, fake] of [[createAnthropicAdapter(), fakes.anthropic], [createGeminiAdapter(), fakes.gemini]] as const) {
    const outcome = await invoke(adapter, fake, 'chat', { ...chat, tools });
    const message = (outcome as { body: { choices: Array<{ message: { tool_calls: Array<{ function: { name: string; arguments: string } }> }; finish_reason: string }> } }).body.choices[0];
    assert.equal(message.finish_reason, 'tool_calls');
    assert.deepEqual(JSON.parse(message.message.tool_calls[0].function.arguments), { city: 'Paris' });
    const events = await collect(await invoke(adapter, fake, 'chat', { ...chat, tools }, { stream: true }));
    const args = events.flatMap((event) => event.chunk?.choices[0]?.delta.tool_calls ?? []).map((call) => call.function?.arguments ?? '').join('');
    assert.deepEqual(JSON.parse(args), { city: 'Paris' });
  }
});

test('bedrock: the request is SigV4-signed', async () => {
  await invoke(createBedrockAdapter(), fakes.bedrock, 'chat', chat, { settings: { region: 'us-east-1', accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' } });
  const recorded = fakes.bedrock.requests.at(-1)!;
  assert.equal(recorded.url, '/model/upstream-model/converse');
  assert.match(String(recorded.headers.authorization), /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
});

test('embeddings past an upstream batch limit (cohere 96 texts, gemini 100) are sent in parts and answered as one', async () => {
  const input = Array.from({ length: 250 }, (_, index) => 'x'.repeat(index + 1));
  for (const [name, adapter, fake, batch, usage] of [
    ['cohere', createCohereAdapter(), fakes.cohere, 96, 500],
    ['gemini', createGeminiAdapter(), fakes.gemini, 100, undefined],
  ] as const) {
    const before = fake.requests.length;
    const outcome = (await invoke(adapter, fake, 'embedding', { model: 'e', input })) as Extract<Outcome, { kind: 'json' }>;
    const sent = fake.requests.slice(before).map((request) => {
      const json = request.json as { texts?: unknown[]; requests?: unknown[] };
      return (json.texts ?? json.requests)!.length;
    });
    assert.deepEqual(sent, [batch, batch, 250 - 2 * batch], `${name}: parts of at most ${batch}`);
    const body = outcome.body as { data: Array<{ index: number; embedding: number[] }>; usage: { prompt_tokens: number } };
    assert.deepEqual(body.data.map((item) => item.index), input.map((_, index) => index), `${name}: indexes across parts`);
    assert.deepEqual(body.data.map((item) => item.embedding[0]), input.map((text) => text.length), `${name}: vectors in request order`);
    assert.equal(body.usage.prompt_tokens, outcome.usage?.inputTokens, `${name}: one usage for the whole`);
    if (usage !== undefined) assert.equal(outcome.usage?.inputTokens, usage, `${name}: the parts' billed units added up`);
  }
  // One part failing fails the call.
  fakes.cohere.failNext({ status: 500, body: { id: 'e', message: 'boom' } });
  await assert.rejects(invoke(createCohereAdapter(), fakes.cohere, 'embedding', { model: 'e', input }));
});

test('gemini embeddings and cohere embed/rerank', async () => {
  const gemini = await invoke(createGeminiAdapter(), fakes.gemini, 'embedding', { model: 'e', input: ['abc', 'hello'] });
  assert.deepEqual((gemini as { body: { data: Array<{ embedding: number[] }> } }).body.data.map((item) => item.embedding[0]), [3, 5]);
  const cohere = await invoke(createCohereAdapter(), fakes.cohere, 'embedding', { model: 'e', input: 'abcd' });
  assert.deepEqual((cohere as { body: { data: Array<{ embedding: number[] }> } }).body.data[0].embedding, [4, 1, 0]);
  const rerank = await invoke(createCohereAdapter(), fakes.cohere, 'rerank', { model: 'r', query: 'red apple', documents: ['green pear', 'red apple pie', 'red car'], top_n: 2 });
  const body = (rerank as { body: { results: Array<{ index: number }>; meta: unknown } }).body;
  assert.deepEqual(body.results.map((result) => result.index), [1, 2]);
  assert.deepEqual(body.meta, { billed_units: { search_units: 1 } });
});

test('mistral ocr', async () => {
  const outcome = await invoke(createMistralOcrAdapter(), fakes.mistral, 'ocr', { model: 'o', document: 'https://example.com/doc.pdf' });
  assert.deepEqual((outcome as { usage?: object }).usage, { ocrPages: 2 });
  assert.match((outcome as { body: { pages: Array<{ markdown: string }> } }).body.pages[0].markdown, /document_url/);
});

test('openai media: images, speech, transcription, moderation, video', async () => {
  const adapter = createOpenAIMediaAdapter();
  const images = await invoke(adapter, fakes.openai, 'image_generation', { model: 'i', prompt: 'cat', n: 2 });
  const data = (images as { body: { data: Array<{ b64_json: string }> } }).body.data;
  assert.equal(data.length, 2);
  assert.equal(Buffer.from(data[0].b64_json, 'base64').subarray(1, 4).toString(), 'PNG');
  const speech = await invoke(adapter, fakes.openai, 'speech', { model: 's', input: 'hi', voice: 'alloy', response_format: 'wav' });
  assert.equal(speech.kind, 'binary');
  assert.equal((speech as { contentType: string }).contentType, 'audio/wav');
  const png = { bytes: Buffer.from(data[0].b64_json, 'base64'), filename: 'in.png', contentType: 'image/png' };
  const edit = await invoke(adapter, fakes.openai, 'image_edit', { prompt: 'hat', files: { image: png } });
  assert.equal((edit as { body: { data: unknown[] } }).body.data.length, 1);
  const transcript = await invoke(adapter, fakes.openai, 'transcription', { model: 't', files: { file: { bytes: Buffer.from('RIFF'), filename: 'a.wav', contentType: 'audio/wav' } } });
  assert.deepEqual((transcript as { body: unknown }).body, { text: 'Transcript of a.wav.', duration: 2 });
  const moderation = await invoke(adapter, fakes.openai, 'moderation', { input: ['I will kill it', 'hello'] });
  assert.deepEqual((moderation as { body: { results: Array<{ flagged: boolean }> } }).body.results.map((result) => result.flagged), [true, false]);
  const video = await invoke(adapter, fakes.openai, 'video', { model: 'v', prompt: 'waves', seconds: 4 });
  assert.equal((video as { body: { status: string } }).body.status, 'queued');
});

test('upstream errors become gateway errors', async () => {
  fakes.anthropic.failNext({ status: 429, headers: { 'retry-after': '7' }, body: { type: 'error', error: { type: 'rate_limit_error', message: 'Rate limited' } } });
  await assert.rejects(invoke(createAnthropicAdapter(), fakes.anthropic, 'chat', chat), (error: { code?: string; details?: Record<string, unknown> }) => {
    assert.equal(error.code, 'upstream_rate_limited');
    assert.equal(error.details?.retry_after_seconds, 7);
    return true;
  });
  fakes.gemini.failNext({ status: 503, body: { error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } } });
  await assert.rejects(invoke(createGeminiAdapter(), fakes.gemini, 'chat', chat), { code: 'upstream_unavailable' });
});
