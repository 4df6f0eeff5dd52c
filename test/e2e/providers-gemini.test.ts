import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startFakeGemini } from '../fakes/fake-gemini.js';
import type { FakeUpstream } from '../fakes/fake-upstream.js';
import { assertCostHeader, assertErrorBody, startProviderGateway, WEATHER_TOOL, type ProviderGateway } from './providers-gateway.js';

const UPSTREAM_KEY = 'AIzaSyE2eUpstreamSecret0123456789abcdefg';

describe('Gemini upstream through the OpenAI SDK', () => {
  let fake: FakeUpstream;
  let gateway: ProviderGateway;

  before(async () => {
    fake = await startFakeGemini();
    const routed = (id: string, upstreamModel = 'gemini-2.5-flash') => ({ id, provider: 'gemini', upstreamModel, baseUrl: fake.baseUrl, apiKeyEnv: 'GEMINI_KEY' });
    gateway = await startProviderGateway(
      [routed('gemini'), routed('gemini-embed', 'text-embedding-004'), routed('gemini-limited'), routed('gemini-down')],
      { GEMINI_KEY: UPSTREAM_KEY },
    );
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  test('tool call round trip: systemInstruction, functionDeclarations, functionCall ↔ tool_calls, functionResponse, maxOutputTokens', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Weather in Paris?' },
    ];
    const { data: first, response } = await gateway.client.chat.completions
      .create({ model: 'gemini', messages, tools: [WEATHER_TOOL], max_tokens: 200 })
      .withResponse();
    assert.ok(assertCostHeader(response.headers) > 0);
    assert.equal(first.choices[0].finish_reason, 'tool_calls');
    const call = first.choices[0].message.tool_calls?.[0];
    assert.ok(call && call.type === 'function');
    assert.ok(call.id.length > 0, 'the gateway names the call Gemini left unnamed');
    assert.equal(call.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.function.arguments), { city: 'Paris' });
    assert.equal(first.usage?.prompt_tokens, 11);
    assert.equal(first.usage?.completion_tokens, 5);

    const sent = fake.requests.at(-1)!;
    assert.equal(sent.url, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.equal(sent.headers['x-goog-api-key'], UPSTREAM_KEY);
    assert.ok(!sent.url.includes(UPSTREAM_KEY), 'the key travels in a header, not the URL');
    const body = sent.json as Record<string, any>;
    assert.deepEqual(body.systemInstruction, { parts: [{ text: 'You are terse.' }] });
    assert.deepEqual(body.contents, [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }]);
    assert.equal(body.generationConfig.maxOutputTokens, 200);
    assert.equal(body.tools[0].functionDeclarations[0].name, 'get_weather');
    assert.deepEqual(body.tools[0].functionDeclarations[0].parameters.properties, { city: { type: 'string' } });

    const second = await gateway.client.chat.completions.create({
      model: 'gemini',
      messages: [...messages, first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '{"temperature":"21C"}' }],
      tools: [WEATHER_TOOL],
    });
    assert.equal(second.choices[0].finish_reason, 'stop');
    assert.equal(second.choices[0].message.content, 'Echo: Weather in Paris?');
    const replay = (fake.requests.at(-1)!.json as Record<string, any>).contents;
    assert.deepEqual(
      replay.map((content: { role: string }) => content.role),
      ['user', 'model', 'user'],
    );
    assert.deepEqual(replay[1].parts.at(-1), { functionCall: { name: 'get_weather', args: { city: 'Paris' } } });
    assert.deepEqual(replay[2].parts, [{ functionResponse: { name: 'get_weather', response: { temperature: '21C' } } }]);
  });

  test('stream: text pieces in order, and a streamed functionCall as tool_calls', async () => {
    const text = await gateway.client.chat.completions.create({ model: 'gemini', messages: [{ role: 'user', content: 'stream me please' }], stream: true });
    let content = '';
    let finish: string | null | undefined;
    for await (const chunk of text) {
      content += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(content, 'Echo: stream me please');
    assert.equal(finish, 'stop');
    assert.equal(fake.requests.at(-1)!.url, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');

    const tools = await gateway.client.chat.completions.create({
      model: 'gemini',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [WEATHER_TOOL],
      stream: true,
    });
    let name = '';
    let args = '';
    finish = undefined;
    for await (const chunk of tools) {
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
        name += delta.function?.name ?? '';
        args += delta.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(name, 'get_weather');
    assert.deepEqual(JSON.parse(args), { city: 'Paris' });
    assert.equal(finish, 'tool_calls');
  });

  test('embeddings: input order kept, dimensions passed, base64 (the SDK default) decoded by the SDK', async () => {
    const { data: decoded, response } = await gateway.client.embeddings
      .create({ model: 'gemini-embed', input: ['abc', 'hello'], dimensions: 3 })
      .withResponse();
    assertCostHeader(response.headers);
    assert.deepEqual(
      decoded.data.map((entry) => [entry.index, entry.embedding]),
      [
        [0, [3, 1, 0]],
        [1, [5, 1, 0]],
      ],
    );
    assert.equal(decoded.model, 'gemini-embed');
    assert.ok((decoded.usage?.prompt_tokens ?? 0) > 0, 'usage is counted by the gateway');
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.url, '/v1beta/models/text-embedding-004:batchEmbedContents');
    const requests = (sent.json as { requests: Array<Record<string, any>> }).requests;
    assert.deepEqual(
      requests.map((request) => [request.model, request.content.parts[0].text, request.outputDimensionality]),
      [
        ['models/text-embedding-004', 'abc', 3],
        ['models/text-embedding-004', 'hello', 3],
      ],
    );

    const raw = await gateway.post('/embeddings', { model: 'gemini-embed', input: 'four', encoding_format: 'base64' });
    assert.equal(raw.status, 200);
    const bytes = Buffer.from(raw.json.data[0].embedding, 'base64');
    assert.equal(bytes.length, 16, 'four little-endian float32 values');
    assert.deepEqual([0, 4, 8, 12].map((offset) => bytes.readFloatLE(offset)), [4, 1, 0, 0]);
    const floats = await gateway.client.embeddings.create({ model: 'gemini-embed', input: 'xy', encoding_format: 'float' });
    assert.deepEqual(floats.data[0].embedding, [2, 1, 0, 0]);
  });

  test('429 RESOURCE_EXHAUSTED stays 429 after the retries; 503 UNAVAILABLE becomes 503; no key leaks', async () => {
    for (let index = 0; index < 3; index++) {
      fake.failNext({
        status: 429,
        body: {
          error: {
            code: 429,
            message: `Quota exceeded for key ${UPSTREAM_KEY}.`,
            status: 'RESOURCE_EXHAUSTED',
            details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0s' }],
          },
        },
      });
    }
    const limited = await gateway.client.chat.completions.create({ model: 'gemini-limited', messages: [{ role: 'user', content: 'hi' }] }).catch((caught: unknown) => caught);
    assert.ok(limited instanceof OpenAI.RateLimitError, String(limited));
    assertErrorBody({ error: limited.error }, 429, limited.status, [UPSTREAM_KEY, 'AIzaSy']);

    for (let index = 0; index < 3; index++) {
      fake.failNext({ status: 503, body: { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } } });
    }
    const down = await gateway.post('/chat/completions', { model: 'gemini-down', messages: [{ role: 'user', content: 'hi' }] });
    assertErrorBody(down.json, 503, down.status, [UPSTREAM_KEY]);
    assert.equal(down.json.error.code, 'upstream_unavailable');
  });
});
