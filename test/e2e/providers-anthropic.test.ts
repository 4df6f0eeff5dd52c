import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startFakeAnthropic } from '../fakes/fake-anthropic.js';
import type { FakeUpstream } from '../fakes/fake-upstream.js';
import { assertCostHeader, assertErrorBody, startProviderGateway, WEATHER_TOOL, type ProviderGateway } from './providers-gateway.js';

const UPSTREAM_KEY = 'sk-ant-api03-e2e-upstream-secret-0123456789';

describe('Anthropic Messages upstream through the OpenAI SDK', () => {
  let fake: FakeUpstream;
  let gateway: ProviderGateway;

  before(async () => {
    fake = await startFakeAnthropic();
    const routed = (id: string) => ({ id, provider: 'anthropic', upstreamModel: 'claude-sonnet-4-5', baseUrl: fake.baseUrl, apiKeyEnv: 'ANTHROPIC_KEY' });
    // Each error scenario has its own deployment, so one scenario's failures never open another's circuit.
    gateway = await startProviderGateway(
      [routed('claude'), routed('claude-overloaded'), routed('claude-limited'), routed('claude-bad'), routed('claude-auth')],
      { ANTHROPIC_KEY: UPSTREAM_KEY },
    );
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  test('tool call round trip: system hoisted, tools as input_schema, tool_use ↔ tool_calls, tool_result, max_tokens', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Weather in Paris?' },
    ];
    const { data: first, response } = await gateway.client.chat.completions
      .create({ model: 'claude', messages, tools: [WEATHER_TOOL], max_tokens: 300 })
      .withResponse();
    assert.ok(assertCostHeader(response.headers) > 0, 'priced from the deployment');
    assert.equal(first.object, 'chat.completion');
    assert.equal(first.model, 'claude');
    assert.equal(first.choices[0].finish_reason, 'tool_calls');
    const call = first.choices[0].message.tool_calls?.[0];
    assert.ok(call && call.type === 'function');
    assert.equal(call.id, 'toolu_fake_1');
    assert.equal(call.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.function.arguments), { city: 'Paris' });
    // 12 input + 3 cache-read tokens upstream: prompt_tokens counts both.
    assert.equal(first.usage?.prompt_tokens, 15);
    assert.equal(first.usage?.completion_tokens, 7);

    const sent = fake.requests.at(-1)!;
    assert.equal(sent.url, '/v1/messages');
    assert.equal(sent.headers['x-api-key'], UPSTREAM_KEY);
    assert.equal(sent.headers['anthropic-version'], '2023-06-01');
    assert.ok(!JSON.stringify(sent.headers).includes(gateway.running.apiKey), 'the virtual key is never forwarded');
    const body = sent.json as Record<string, any>;
    assert.equal(body.model, 'claude-sonnet-4-5');
    assert.equal(body.system, 'You are terse.');
    assert.equal(body.max_tokens, 300);
    assert.ok(body.messages.every((message: { role: string }) => message.role !== 'system'), 'no system turn in messages');
    assert.deepEqual(body.tools, [
      { name: 'get_weather', description: 'Current weather of a city', input_schema: WEATHER_TOOL.function.parameters },
    ]);

    const second = await gateway.client.chat.completions.create({
      model: 'claude',
      messages: [...messages, first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '21°C and sunny' }],
      tools: [WEATHER_TOOL],
    });
    assert.equal(second.choices[0].finish_reason, 'stop');
    assert.equal(second.choices[0].message.content, 'Echo: Weather in Paris?');
    const replay = fake.requests.at(-1)!.json as Record<string, any>;
    assert.equal(replay.max_tokens, 4096, 'max_tokens is required upstream, so a default is sent');
    assert.deepEqual(
      replay.messages.map((message: { role: string }) => message.role),
      ['user', 'assistant', 'user'],
    );
    const toolUse = replay.messages[1].content.find((block: { type: string }) => block.type === 'tool_use');
    assert.deepEqual(toolUse, { type: 'tool_use', id: 'toolu_fake_1', name: 'get_weather', input: { city: 'Paris' } });
    const toolResult = replay.messages[2].content.find((block: { type: string }) => block.type === 'tool_result');
    assert.equal(toolResult.tool_use_id, 'toolu_fake_1');
    assert.match(JSON.stringify(toolResult.content), /21°C and sunny/);
  });

  test('stream: text deltas, and tool-call argument deltas the SDK reassembles', async () => {
    const text = await gateway.client.chat.completions.create({
      model: 'claude',
      messages: [{ role: 'user', content: 'hello there' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let content = '';
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of text) {
      content += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(content, 'Echo: hello there');
    assert.equal(finish, 'stop');
    assert.equal(usage?.completion_tokens, 7);
    assert.equal((fake.requests.at(-1)!.json as { stream?: boolean }).stream, true);

    const tools = await gateway.client.chat.completions.create({
      model: 'claude',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [WEATHER_TOOL],
      stream: true,
    });
    const calls = new Map<number, { id?: string; name?: string; arguments: string }>();
    finish = undefined;
    for await (const chunk of tools) {
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
        const entry = calls.get(delta.index) ?? { arguments: '' };
        entry.id ??= delta.id;
        entry.name ??= delta.function?.name;
        entry.arguments += delta.function?.arguments ?? '';
        calls.set(delta.index, entry);
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(finish, 'tool_calls');
    assert.equal(calls.size, 1);
    const [only] = calls.values();
    assert.equal(only.id, 'toolu_fake_1');
    assert.equal(only.name, 'get_weather');
    assert.deepEqual(JSON.parse(only.arguments), { city: 'Paris' });
  });

  test('limits are enforced before the upstream is called', async () => {
    const before = fake.requests.length;
    for (const extra of [{ temperature: 2.5 }, { max_tokens: 0 }, { presence_penalty: -3 }, { user: 'u'.repeat(201) }]) {
      const refused = await gateway.post('/chat/completions', { model: 'claude', messages: [{ role: 'user', content: 'hi' }], ...extra });
      assertErrorBody(refused.json, 400, refused.status, []);
    }
    assert.equal(fake.requests.length, before, 'nothing reached the upstream');
  });

  test('529 overloaded becomes 503 after the retries', async () => {
    const before = fake.requests.length;
    for (let index = 0; index < 3; index++) {
      fake.failNext({ status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
    }
    const error = await gateway.client.chat.completions.create({ model: 'claude-overloaded', messages: [{ role: 'user', content: 'hi' }] }).catch((caught: unknown) => caught);
    assert.ok(error instanceof OpenAI.APIError, String(error));
    assertErrorBody({ error: error.error }, 503, error.status, [UPSTREAM_KEY]);
    assert.equal((error.error as { code?: string }).code, 'upstream_unavailable');
    assert.equal(fake.requests.length - before, 3, 'one attempt and two retries');
  });

  test('429 stays 429 after the retries; 400 is 400 at once; neither leaks the upstream key', async () => {
    for (let index = 0; index < 3; index++) {
      fake.failNext({
        status: 429,
        headers: { 'retry-after': '0' },
        body: { type: 'error', error: { type: 'rate_limit_error', message: `Rate limited for key ${UPSTREAM_KEY}` } },
      });
    }
    const limited = await gateway.client.chat.completions.create({ model: 'claude-limited', messages: [{ role: 'user', content: 'hi' }] }).catch((caught: unknown) => caught);
    assert.ok(limited instanceof OpenAI.RateLimitError, String(limited));
    assertErrorBody({ error: limited.error }, 429, limited.status, [UPSTREAM_KEY, 'sk-ant-api03']);
    assert.equal((limited.error as { code?: string }).code, 'upstream_rate_limited');

    const before = fake.requests.length;
    fake.failNext({
      status: 400,
      body: { type: 'error', error: { type: 'invalid_request_error', message: `max_tokens: too large (key ${UPSTREAM_KEY}, see https://internal.example/x)` } },
    });
    const bad = await gateway.post('/chat/completions', { model: 'claude-bad', messages: [{ role: 'user', content: 'hi' }] });
    assertErrorBody(bad.json, 400, bad.status, [UPSTREAM_KEY, 'sk-ant-api03', 'internal.example']);
    assert.equal(bad.json.error.code, 'upstream_bad_request');
    assert.match(bad.json.error.message, /max_tokens: too large/, 'the provider text is quoted');
    assert.equal(fake.requests.length - before, 1, 'a 400 is not retried');

    fake.failNext({ status: 401, body: { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${UPSTREAM_KEY}` } } });
    const auth = await gateway.post('/chat/completions', { model: 'claude-auth', messages: [{ role: 'user', content: 'hi' }] });
    assertErrorBody(auth.json, 502, auth.status, [UPSTREAM_KEY, 'sk-ant-api03']);
    assert.equal(auth.json.error.code, 'upstream_authentication');
  });
});
