import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import {
  APIError,
  BadRequestError,
  DEFAULT_GW_BASE_URL,
  Gw,
  GwCreditError,
  GwGuardrailBlockedError,
  GwMissingApiKeyError,
  GwRateLimitError,
  GwServiceError,
  GwStream,
  InternalServerError,
  RateLimitError,
} from '../src/index.js';
import { startFakeGateway, type FakeGateway } from './fake-gateway.js';

let fake: FakeGateway;

before(async () => {
  fake = await startFakeGateway();
  // The client is configured from the environment only, as a user's program would be.
  process.env['GW_API_KEY'] = 'sk-gw-unit-test';
  process.env['GW_BASE_URL'] = fake.baseURL;
});

after(async () => {
  await fake.close();
});

function lastSeen() {
  const request = fake.seen.at(-1);
  assert.ok(request, 'the fake gateway saw no request');
  return request;
}

test('new Gw() reads GW_API_KEY and GW_BASE_URL; a missing key throws a clear error', async () => {
  const gw = new Gw();
  assert.equal(gw.baseURL, fake.baseURL);
  assert.equal(gw.rootURL, fake.baseURL.replace(/\/v1$/, ''));
  assert.ok(gw instanceof OpenAI, 'a Gw is an OpenAI client');
  assert.ok(gw instanceof Gw);
  await gw.models.list();
  assert.equal(lastSeen().authorization, 'Bearer sk-gw-unit-test');

  const saved = process.env['GW_API_KEY'];
  delete process.env['GW_API_KEY'];
  try {
    assert.throws(() => new Gw(), (error: unknown) => error instanceof GwMissingApiKeyError && /GW_API_KEY/.test(error.message));
    assert.equal(new Gw({ apiKey: 'sk-gw-explicit', baseURL: undefined }).apiKey, 'sk-gw-explicit');
  } finally {
    process.env['GW_API_KEY'] = saved;
  }
  const savedBase = process.env['GW_BASE_URL'];
  delete process.env['GW_BASE_URL'];
  try {
    assert.equal(new Gw().baseURL, DEFAULT_GW_BASE_URL);
  } finally {
    process.env['GW_BASE_URL'] = savedBase;
  }
});

test('chat completion: gw_* fields are sent and the metadata is read from the headers', async () => {
  const gw = new Gw();
  const { data, meta } = await gw.chat.completions
    .create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'hi' }],
      gw_guardrail_ids: ['g1'],
      gw_cache: true,
      gw_prompt_template_id: 'tpl',
      gw_prompt_variables: { name: 'Ada' },
      gw_prompt_version: 3,
    })
    .withMeta();
  assert.equal(data.choices[0]?.message.content, 'Hello from gw');
  const body = lastSeen().body as Record<string, unknown>;
  assert.deepEqual(body['gw_guardrail_ids'], ['g1']);
  assert.equal(body['gw_cache'], true);
  assert.equal(body['gw_prompt_template_id'], 'tpl');
  assert.deepEqual(body['gw_prompt_variables'], { name: 'Ada' });
  assert.equal(body['gw_prompt_version'], 3);
  assert.match(meta.requestId ?? '', /^req_fake_/);
  assert.equal(meta.latencyMs, 42);
  assert.equal(meta.costUsd, '0.000123456');
  assert.equal(meta.costNanoUsd, 123_456);
  assert.equal(meta.costMicroUsd, '123.456');
  assert.deepEqual(meta.guardrailsApplied, ['pii-guard', 'injection-guard']);
  assert.deepEqual(meta.postCallGuardrails, ['toxicity']);
  assert.equal(meta.promptVersion, 3);
  assert.equal(meta.abTest, 'variant-b');
  assert.equal(meta.cache, 'miss');
  assert.equal(meta.orgId, 'org_1');
  assert.equal(meta.keyAlias, 'ci-key');
  assert.equal(meta.route, 'openai/gpt-test');
  assert.equal(meta.rateLimit.limitRequests, 500);
  assert.equal(meta.rateLimit.remainingRequests, 499);

  // A plain await still gives the SDK's result.
  const plain = await gw.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(plain.choices[0]?.message.content, 'Hello from gw');
});

test('streamed chat: the cost is on stream.meta after iteration, the added usage chunk stays hidden', async () => {
  const gw = new Gw();
  const { data: stream, meta } = await gw.chat.completions
    .create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], stream: true })
    .withMeta();
  assert.ok(stream instanceof GwStream);
  assert.equal(stream.meta, meta);
  assert.deepEqual((lastSeen().body as { stream_options?: unknown }).stream_options, { include_usage: true });
  assert.equal(meta.streamBuffered, true);
  assert.equal(meta.latencyMs, 7);
  assert.equal(meta.costUsd, undefined, 'the cost is not known before the end');
  let text = '';
  let chunks = 0;
  for await (const chunk of stream) {
    chunks += 1;
    text += chunk.choices[0]?.delta.content ?? '';
  }
  assert.equal(text, 'Hello');
  assert.equal(chunks, 2, 'the usage chunk asked for on the caller\'s behalf is not shown');
  assert.equal(stream.meta.costUsd, '0.000000789');
  assert.equal(stream.meta.costNanoUsd, 789);
  assert.equal(stream.meta.costMicroUsd, '0.789');
});

test('streamed chat with include_usage asked by the caller shows the usage chunk', async () => {
  const gw = new Gw();
  const stream = await gw.chat.completions.create({
    model: 'gpt-test',
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const seen = [];
  for await (const chunk of stream) seen.push(chunk);
  assert.equal(seen.length, 3);
  assert.equal(seen[2]?.usage?.total_tokens, 7);
  assert.equal(stream.meta.costNanoUsd, 789);
});

test('every gateway error becomes its Gw class, which is also the SDK class', async () => {
  const gw = new Gw({ maxRetries: 0 });
  const call = (model: string) => gw.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] });

  const blocked = await call('blocked-model').catch((error: unknown) => error);
  assert.ok(blocked instanceof GwGuardrailBlockedError);
  assert.ok(blocked instanceof BadRequestError);
  assert.equal(blocked.status, 400);
  assert.equal(blocked.code, 'guardrail_blocked');
  assert.equal(blocked.type, 'invalid_request_error');
  assert.equal(blocked.guardrailName, 'pii-guard');
  assert.match(blocked.message, /Blocked by guardrail pii-guard/);
  assert.match(blocked.requestID ?? '', /^req_fake_/);

  const broke = await call('broke-model').catch((error: unknown) => error);
  assert.ok(broke instanceof GwCreditError);
  assert.ok(broke instanceof APIError);
  assert.equal(broke.status, 402);
  assert.equal(broke.code, 'insufficient_credits');
  assert.equal(broke.type, 'insufficient_credits');
  assert.match(broke.requestID ?? '', /^req_fake_/);

  for (const [model, code, retryAfter] of [
    ['rpm-model', 'rate_limit_exceeded', 7],
    ['tpm-model', 'tpm_limit_exceeded', 13],
  ] as const) {
    const limited = await call(model).catch((error: unknown) => error);
    assert.ok(limited instanceof GwRateLimitError, model);
    assert.ok(limited instanceof RateLimitError);
    assert.equal(limited.status, 429);
    assert.equal(limited.code, code);
    assert.equal(limited.retryAfter, retryAfter);
  }

  const down = await call('credit-down-model').catch((error: unknown) => error);
  assert.ok(down instanceof GwServiceError);
  assert.ok(down instanceof InternalServerError);
  assert.equal(down.status, 503);
  assert.equal(down.code, 'credit_check_failed');

  // Other codes keep the SDK's own classes, not a Gw one.
  const upstream = await call('upstream-down-model').catch((error: unknown) => error);
  assert.ok(upstream instanceof InternalServerError);
  assert.ok(!(upstream instanceof GwServiceError));
  const bad = await call('bad-model').catch((error: unknown) => error);
  assert.ok(bad instanceof BadRequestError);
  assert.ok(!(bad instanceof GwGuardrailBlockedError));
  assert.equal(bad.param, 'temperature');
  assert.match(bad.requestID ?? '', /^req_fake_/);
});

test('a plain catch (e instanceof GwCreditError) works', async () => {
  const gw = new Gw({ maxRetries: 0 });
  let caught = false;
  try {
    await gw.embeddings.create({ model: 'broke-model', input: 'x' });
  } catch (e) {
    if (e instanceof GwCreditError) caught = true;
  }
  assert.ok(caught);
});

test('gw resources call the right paths, outside /v1 where the spec says so', async () => {
  const gw = new Gw();
  const expectCall = async (promise: Promise<unknown>, method: string, path: string, query?: Record<string, string>, body?: unknown) => {
    await promise;
    const seen = lastSeen();
    assert.equal(`${seen.method} ${seen.path}`, `${method} ${path}`);
    if (query) assert.deepEqual(seen.query, query);
    if (body !== undefined) assert.deepEqual(seen.body, body);
  };
  await expectCall(gw.rerank.create({ model: 'r', query: 'q', documents: ['a', 'b'], top_n: 1 }), 'POST', '/v1/rerank', {}, {
    model: 'r',
    query: 'q',
    documents: ['a', 'b'],
    top_n: 1,
  });
  await expectCall(gw.ocr.create({ model: 'o', document: 'https://example.com/a.pdf' }), 'POST', '/v1/ocr');
  await expectCall(gw.videos.create({ model: 'v', prompt: 'a cat', seconds: 4 }), 'POST', '/v1/videos', {}, {
    model: 'v',
    prompt: 'a cat',
    seconds: 4,
  });
  await expectCall(gw.videos.retrieve('vid_1'), 'GET', '/v1/videos/vid_1');
  await expectCall(gw.credits.balance(), 'GET', '/api/credits/balance');
  await expectCall(gw.credits.history({ limit: 5, offset: 10 }), 'GET', '/api/credits/history', { limit: '5', offset: '10' });
  await expectCall(gw.pricing.list(), 'GET', '/api/models/pricing');
  await expectCall(gw.guardrails.list(), 'GET', '/gw/guardrail/list');
  await expectCall(gw.guardrails.info('g 1'), 'GET', '/gw/guardrail/info', { guardrail_id: 'g 1' });
  await expectCall(gw.guardrails.logs({ limit: 3 }), 'GET', '/gw/guardrail/logs', { limit: '3' });
  await expectCall(gw.prompts.list(), 'GET', '/gw/prompt/list');
  await expectCall(gw.prompts.info('p1'), 'GET', '/gw/prompt/info', { prompt_id: 'p1' });
  await expectCall(gw.prompts.diff({ prompt_id: 'p1', v1: 1, v2: 2 }), 'GET', '/gw/prompt/version/diff', {
    prompt_id: 'p1',
    v1: '1',
    v2: '2',
  });
  const channel = { channel_type: 'webhook' as const, name: 'ops', config: { url: 'https://hooks.example.com/x' } };
  await expectCall(gw.channels.create(channel), 'POST', '/gw/channels', {}, channel);
  await expectCall(gw.channels.test('ch_1'), 'POST', '/gw/channels/ch_1/test', {}, undefined);
  assert.equal(lastSeen().body, undefined, 'the channel test sends no body');

  const { data: bytes, meta } = await gw.videos.content('vid_1').withMeta();
  assert.ok(bytes instanceof Uint8Array);
  assert.deepEqual([...bytes], [0, 1, 2, 3, 255]);
  assert.match(meta.requestId ?? '', /^req_fake_/);

  const { meta: balanceMeta } = await gw.credits.balance().withMeta();
  assert.equal(balanceMeta.costUsd, '0.5');
  assert.equal(balanceMeta.costNanoUsd, 500_000_000);
});

test('withMeta works on the SDK resources and on embeddings', async () => {
  const gw = new Gw();
  const { data: page, meta } = await gw.withMeta(gw.models.list());
  assert.equal(page.data[0]?.id, 'gpt-test');
  assert.equal(meta.cache, 'hit');
  const { data, meta: embeddingMeta } = await gw.embeddings
    .create({ model: 'e', input: 'x', gw_cache: true, encoding_format: 'float' })
    .withMeta();
  assert.deepEqual(data.data[0]?.embedding, [0.5, 0.25]);
  assert.equal((lastSeen().body as Record<string, unknown>)['gw_cache'], true);
  assert.equal(embeddingMeta.costNanoUsd, 20);
  assert.equal(embeddingMeta.cache, 'hit');
});

test('SDK helpers keep working: chat.completions.stream() and withOptions()', async () => {
  const gw = new Gw();
  const runner = gw.chat.completions.stream({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
  const final = await runner.finalChatCompletion();
  assert.equal(final.choices[0]?.message.content, 'Hello');
  const copy = gw.withOptions({ maxRetries: 0 });
  assert.ok(copy instanceof Gw);
  assert.equal(copy.maxRetries, 0);
  assert.equal(copy.baseURL, gw.baseURL);
  const error = await copy.chat.completions
    .create({ model: 'broke-model', messages: [{ role: 'user', content: 'x' }] })
    .catch((e: unknown) => e);
  assert.ok(error instanceof GwCreditError);
});

test('a gateway error inside a stream becomes its Gw class too', async () => {
  const gw = new Gw();
  const stream = await gw.chat.completions.create({
    model: 'stream-blocked-model',
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
  });
  let text = '';
  const error = await (async () => {
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  })().catch((e: unknown) => e);
  assert.equal(text, 'Hel');
  assert.ok(error instanceof GwGuardrailBlockedError, String(error));
  assert.ok(error instanceof BadRequestError);
  assert.equal(error.status, 400);
  assert.equal(error.guardrailName, 'toxicity');
  assert.match(error.requestID ?? '', /^req_fake_/);
});
