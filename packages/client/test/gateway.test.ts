import assert from 'node:assert/strict';
import { after, before, test, type TestContext } from 'node:test';
import { toFile } from 'openai';
import { adminRequest, startGateway, type RunningGateway } from '../../../test/helpers/start-gateway.js';
import {
  AuthenticationError,
  BadRequestError,
  Gw,
  GwCreditError,
  GwGuardrailBlockedError,
  GwRateLimitError,
  NotFoundError,
  RateLimitError,
  APIError,
} from '../src/index.js';

// Against a real gw on an ephemeral port, with its built-in local models. The client is configured
// only through GW_API_KEY and GW_BASE_URL, as a user's program would be.
let running: RunningGateway;
let gw: Gw;

before(async () => {
  running = await startGateway();
  process.env['GW_API_KEY'] = running.apiKey;
  process.env['GW_BASE_URL'] = running.baseURL;
  // Retries absorb the tier's per-second ceiling when calls come back to back (the SDK honours Retry-After).
  gw = new Gw({ maxRetries: 4 });
});

after(async () => {
  await running?.close();
});

interface HistoryEntry {
  request_id: string;
  cost_usd: string;
  cost_nanos: number;
}

/** The ledger's entry for a request, to check the cost the client read against what was debited. */
async function ledgerEntry(requestId: string | null): Promise<HistoryEntry> {
  assert.ok(requestId, 'the call has a request id');
  // The ledger is written in batches; look a few times before giving up.
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const history = (await gw.credits.history({ limit: 100 })) as { data: HistoryEntry[] };
    const entry = history.data.find((item) => item.request_id === requestId);
    if (entry) return entry;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`no credit history entry for ${requestId}`);
}

async function issueKey(body: Record<string, unknown>): Promise<string> {
  const created = await adminRequest(running, 'POST', '/api/admin/keys', { org_id: running.orgId, ...body });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  return created.body.key as string;
}

/** Skips (visibly) when a route is not served by this build of the gateway. */
async function requireRoute(t: TestContext, call: () => Promise<unknown>): Promise<boolean> {
  try {
    await call();
    return true;
  } catch (error) {
    if (error instanceof NotFoundError && /Unknown endpoint/.test(error.message)) {
      t.skip(`not served by this gateway yet: ${error.message}`);
      return false;
    }
    return true;
  }
}

test('non-streamed chat: the cost read by the client is exactly what the ledger debited', async () => {
  const { data, meta } = await gw.chat.completions
    .create({ model: 'local-chat', messages: [{ role: 'user', content: 'ping' }], gw_cache: false })
    .withMeta();
  assert.match(data.choices[0]?.message.content ?? '', /ping/);
  assert.match(meta.requestId ?? '', /^req_/);
  assert.ok((meta.latencyMs ?? -1) >= 0);
  assert.equal(meta.orgId, running.orgId);
  assert.ok(meta.keyAlias);
  assert.ok(meta.costUsd, 'x-gw-request-cost is present');
  assert.ok(Number.isInteger(meta.costNanoUsd));
  assert.ok((meta.costNanoUsd ?? 0) > 0);
  const entry = await ledgerEntry(meta.requestId);
  assert.equal(meta.costNanoUsd, entry.cost_nanos);
  assert.equal(meta.costUsd, entry.cost_usd);
  assert.equal(Number(meta.costMicroUsd) * 1000, entry.cost_nanos);
});

test('streamed chat: the cost is on stream.meta after the stream ends and matches the ledger', async () => {
  const stream = await gw.chat.completions.create({
    model: 'local-chat',
    messages: [{ role: 'user', content: 'stream please' }],
    stream: true,
  });
  assert.match(stream.meta.requestId ?? '', /^req_/);
  let text = '';
  for await (const chunk of stream) {
    assert.ok(chunk.choices.length > 0, 'the usage chunk the client asked for is not shown');
    text += chunk.choices[0]?.delta.content ?? '';
  }
  assert.match(text, /stream please/);
  assert.ok(stream.meta.costUsd, 'gw_cost_usd was read from the usage chunk');
  const entry = await ledgerEntry(stream.meta.requestId);
  assert.equal(stream.meta.costNanoUsd, entry.cost_nanos);
  assert.equal(stream.meta.costUsd, entry.cost_usd);
});

test('every inference endpoint is callable and reports its cost', async () => {
  const costs: Record<string, string | undefined> = {};
  const completion = await gw.completions.create({ model: 'local-chat', prompt: 'Once upon a time', gw_cache: false }).withMeta();
  assert.equal(completion.data.object, 'text_completion');
  costs['completions'] = completion.meta.costUsd;

  const embedding = await gw.embeddings.create({ model: 'local-embed', input: ['alpha'], dimensions: 16 }).withMeta();
  assert.equal(embedding.data.data[0]?.embedding.length, 16);
  costs['embeddings'] = embedding.meta.costUsd;

  const image = await gw.withMeta(gw.images.generate({ model: 'local-image', prompt: 'a fox', size: '1024x1024' }));
  assert.ok(image.data.data?.[0]?.b64_json);
  costs['images'] = image.meta.costUsd;

  const speech = await gw.withMeta(gw.audio.speech.create({ model: 'local-tts', voice: 'alloy', input: 'hello there', response_format: 'wav' }));
  const wav = Buffer.from(await speech.data.arrayBuffer());
  assert.equal(wav.toString('latin1', 0, 4), 'RIFF');
  costs['speech'] = speech.meta.costUsd;

  const transcription = await gw.withMeta(
    gw.audio.transcriptions.create({ model: 'local-stt', file: await toFile(wav, 'speech.wav', { type: 'audio/wav' }) }),
  );
  assert.equal(transcription.data.text, 'hello there');
  costs['transcription'] = transcription.meta.costUsd;

  const moderation = await gw.withMeta(gw.moderations.create({ model: 'local-moderation', input: 'hello' }));
  assert.equal(moderation.data.results.length, 1);

  const rerank = await gw.rerank.create({ model: 'local-rerank', query: 'apple pie', documents: ['cars', 'apple pie recipe'], top_n: 1 }).withMeta();
  assert.equal(rerank.data.results[0]?.index, 1);
  costs['rerank'] = rerank.meta.costUsd;

  const document = `data:text/plain;base64,${Buffer.from('page one').toString('base64')}`;
  const ocr = await gw.ocr.create({ model: 'local-ocr', document }).withMeta();
  assert.deepEqual(ocr.data.pages, [{ index: 0, markdown: 'page one' }]);
  costs['ocr'] = ocr.meta.costUsd;

  const video = await gw.videos.create({ model: 'local-video', prompt: 'waves', seconds: 1 }).withMeta();
  assert.equal(video.data.status, 'queued');
  costs['videos'] = video.meta.costUsd;
  let state = await gw.videos.retrieve(video.data.id);
  for (let attempt = 0; attempt < 240 && state.status !== 'completed' && state.status !== 'failed'; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    state = await gw.videos.retrieve(video.data.id);
  }
  assert.equal(state.status, 'completed');
  const bytes = await gw.videos.content(video.data.id);
  assert.ok(bytes instanceof Uint8Array && bytes.length > 0);

  for (const [name, cost] of Object.entries(costs)) {
    assert.ok(cost !== undefined, `${name} reports x-gw-request-cost`);
  }

  const models = await gw.withMeta(gw.models.list());
  assert.ok(models.data.data.some((model) => model.id === 'local-chat'));
  assert.ok(models.meta.cache === 'hit' || models.meta.cache === 'miss');
  const one = await gw.models.retrieve('local-chat');
  assert.equal(one.id, 'local-chat');
});

test('credits and pricing endpoints (outside /v1)', async () => {
  const balance = (await gw.credits.balance()) as { org_id?: string; balance_nanos?: number };
  assert.equal(balance.org_id, running.orgId);
  assert.equal(typeof balance.balance_nanos, 'number');
  const history = (await gw.credits.history({ limit: 2, offset: 0 })) as { data: unknown[] };
  assert.ok(Array.isArray(history.data) && history.data.length <= 2);
  const pricing = (await gw.pricing.list()) as { data: Array<{ model: string }> };
  assert.ok(pricing.data.some((price) => price.model === 'local-chat'));
});

test('guardrail and prompt endpoints (outside /v1)', async (t) => {
  if (!(await requireRoute(t, () => gw.guardrails.list()))) return;
  const guardrails = await gw.guardrails.list();
  assert.ok(guardrails && typeof guardrails === 'object');
  const logs = await gw.guardrails.logs({ limit: 5 });
  assert.ok(logs && typeof logs === 'object');
  await assert.rejects(gw.guardrails.info('00000000-0000-4000-8000-000000000000'), (error: unknown) => error instanceof APIError);
  if (!(await requireRoute(t, () => gw.prompts.list()))) return;
  const prompts = await gw.prompts.list();
  assert.ok(prompts && typeof prompts === 'object');
  await assert.rejects(gw.prompts.info('00000000-0000-4000-8000-000000000000'), (error: unknown) => error instanceof APIError);
});

test('alert channel endpoints (outside /v1)', async (t) => {
  if (!(await requireRoute(t, () => gw.channels.test('no-such-channel')))) return;
  // Webhook urls must be public HTTPS addresses; a loopback one is refused at creation.
  await assert.rejects(
    gw.channels.create({ name: 'local', channel_type: 'webhook', config: { url: 'https://127.0.0.1/hook' } }),
    (error: unknown) => error instanceof BadRequestError,
  );
  const email = await gw.channels.create({ name: 'ops mail', channel_type: 'email', config: { to: ['ops@example.com'] } }).catch((e: unknown) => e);
  if (email instanceof APIError) {
    assert.ok(email instanceof BadRequestError, `channel creation answered ${email.status}`);
    return;
  }
  assert.equal(email.channel_type, 'email');
  await assert.rejects(gw.channels.test('no-such-channel'), (error: unknown) => error instanceof NotFoundError);
});

test('catch (e) { if (e instanceof GwCreditError) … } on a key over its budget', async () => {
  const broke = new Gw({ apiKey: await issueKey({ name: 'client-broke', budget: { limit_usd: '0.000000001' } }), maxRetries: 0 });
  let caught: GwCreditError | undefined;
  try {
    await broke.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'ping' }] });
  } catch (e) {
    if (e instanceof GwCreditError) caught = e;
    else throw e;
  }
  assert.ok(caught, 'GwCreditError was thrown');
  assert.ok(caught instanceof APIError);
  assert.equal(caught.status, 402);
  assert.equal(caught.code, 'insufficient_credits');
  assert.equal(caught.type, 'insufficient_credits');
  assert.ok(caught.message.length > 0);
  assert.match(caught.requestID ?? '', /^req_/);

  // Streams fail the same way, before the first chunk.
  await assert.rejects(
    broke.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'ping' }], stream: true }),
    (error: unknown) => error instanceof GwCreditError,
  );
});

test('GwRateLimitError for the RPM and the TPM ceilings, with retryAfter', async () => {
  const rpm = new Gw({ apiKey: await issueKey({ name: 'client-rpm', limits: { rpm: 1 } }), maxRetries: 0 });
  await rpm.models.list().catch(() => undefined);
  const request = () => rpm.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'ping' }] });
  let limited: unknown;
  for (let attempt = 0; attempt < 3 && !limited; attempt += 1) limited = await request().then(() => undefined, (error: unknown) => error);
  assert.ok(limited instanceof GwRateLimitError, String(limited));
  assert.ok(limited instanceof RateLimitError);
  assert.equal(limited.status, 429);
  assert.equal(limited.code, 'rate_limit_exceeded');
  assert.ok((limited.retryAfter ?? 0) > 0);
  assert.match(limited.requestID ?? '', /^req_/);

  const tpm = new Gw({ apiKey: await issueKey({ name: 'client-tpm', limits: { tpm: 1 } }), maxRetries: 0 });
  const tokens = await tpm.chat.completions
    .create({ model: 'local-chat', messages: [{ role: 'user', content: 'a long enough prompt to pass one token' }] })
    .then(() => undefined, (error: unknown) => error);
  const second =
    tokens ??
    (await tpm.chat.completions
      .create({ model: 'local-chat', messages: [{ role: 'user', content: 'again' }] })
      .then(() => undefined, (error: unknown) => error));
  assert.ok(second instanceof GwRateLimitError, String(second));
  assert.equal(second.code, 'tpm_limit_exceeded');
});

test('GwGuardrailBlockedError when a guardrail blocks the request', async (t) => {
  const created = await adminRequest(running, 'POST', '/api/admin/guardrails', {
    org_id: running.orgId,
    name: 'client-secret-guard',
    type: 'secret_detection',
    mode: 'pre_call',
    action: 'block',
  });
  if (created.status === 404) {
    t.skip('guardrail administration is not served by this gateway yet');
    return;
  }
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const guardrailId = (created.body as { id: string }).id;
  const error = await gw.chat.completions
    .create({
      model: 'local-chat',
      messages: [{ role: 'user', content: 'my key is AKIAIOSFODNN7EXAMPLE and sk-proj-abcdefghijklmnopqrstuvwxyz012345' }],
      gw_guardrail_ids: [guardrailId],
    })
    .then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof GwGuardrailBlockedError, String(error));
  assert.ok(error instanceof BadRequestError);
  assert.equal(error.code, 'guardrail_blocked');
  assert.match(error.requestID ?? '', /^req_/);
});

test('standard statuses keep the SDK classes', async () => {
  const wrongKey = new Gw({ apiKey: `sk-gw-${'x'.repeat(40)}`, maxRetries: 0 });
  const gw = new Gw({ maxRetries: 0 });
  await assert.rejects(wrongKey.models.list(), (error: unknown) => error instanceof AuthenticationError && error.code === 'invalid_api_key');
  await assert.rejects(gw.models.retrieve('no-such-model'), (error: unknown) => error instanceof NotFoundError);
  await assert.rejects(
    gw.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'x' }], temperature: 3 }),
    (error: unknown) => error instanceof BadRequestError && !(error instanceof GwGuardrailBlockedError) && error.code === 'invalid_request',
  );
});
