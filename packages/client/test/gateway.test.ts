import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { toFile } from 'openai';
import { adminRequest, type RunningGateway } from '../../../test/helpers/start-gateway.js';
import { startGatewayForClient } from './start-gateway-for-client.js';
import {
  BadRequestError,
  Gw,
  GwGuardrailBlockedError,
  NotFoundError,
  type CreditHistoryEntry,
} from '../src/index.js';

// Against a real gw on an ephemeral port, with its built-in local models. The client is configured
// only through GW_API_KEY and GW_BASE_URL, as a user's program would be.
let running: RunningGateway;
let gw: Gw;

before(async () => {
  running = await startGatewayForClient();
  // Retries absorb the tier's per-second ceiling when calls come back to back (the SDK honours Retry-After).
  gw = new Gw({ maxRetries: 4 });
});

after(async () => {
  await running?.close();
});

/** The ledger's entry for a request, to check the cost the client read against what was debited. */
async function ledgerEntry(requestId: string | null): Promise<CreditHistoryEntry> {
  assert.ok(requestId, 'the call has a request id');
  // The ledger is written in batches; look a few times before giving up.
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const history = await gw.credits.history({ limit: 100 });
    const entry = history.data.find((item) => item.request_id === requestId);
    if (entry) return entry;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`no credit history entry for ${requestId}`);
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

test('gw_cache: the second identical call is a cache hit', async () => {
  const body = { model: 'local-chat', messages: [{ role: 'user' as const, content: 'cache me please' }], gw_cache: true };
  const first = await gw.chat.completions.create(body).withMeta();
  const second = await gw.chat.completions.create(body).withMeta();
  assert.equal(first.meta.cache, 'miss');
  assert.equal(second.meta.cache, 'hit');
  assert.equal(second.data.choices[0]?.message.content, first.data.choices[0]?.message.content);
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
  const balance = await gw.credits.balance();
  assert.equal(balance.org_id, running.orgId);
  assert.equal(typeof balance.balance_nanos, 'number');
  const history = await gw.credits.history({ limit: 2, offset: 0 });
  assert.ok(Array.isArray(history.data) && history.data.length <= 2);
  assert.equal(history.limit, 2);
  const pricing = await gw.pricing.list();
  assert.ok(pricing.data.some((price) => price.model === 'local-chat'));
});

test('guardrails: list, info and logs (outside /v1), and GwGuardrailBlockedError on a block', async () => {
  const created = await adminRequest(running, 'POST', '/api/admin/guardrails', {
    org_id: running.orgId,
    name: 'client-secret-guard',
    kind: 'secrets',
    stage: 'pre',
    action: 'block',
    // Only calls that name it run it, so the other tests of this org are not affected.
    enabled_by_default: false,
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const guardrailId = (created.body as { id: string }).id;

  const list = await gw.guardrails.list();
  assert.ok(list.data.some((guardrail) => guardrail.id === guardrailId));
  const info = await gw.guardrails.info(guardrailId);
  assert.equal(info.name, 'client-secret-guard');
  assert.equal(info.kind, 'secrets');

  const error = await gw.chat.completions
    .create({
      model: 'local-chat',
      messages: [{ role: 'user', content: 'my AWS key is AKIAIOSFODNN7EXAMPLE, keep it safe' }],
      gw_guardrail_ids: [guardrailId],
    })
    .then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof GwGuardrailBlockedError, String(error));
  assert.ok(error instanceof BadRequestError);
  assert.equal(error.status, 400);
  assert.equal(error.code, 'guardrail_blocked');
  assert.equal(error.guardrailName, 'client-secret-guard');
  assert.equal(error.guardrailId, guardrailId);
  assert.match(error.requestID ?? '', /^req_/);

  // The same call without the secret passes, and says which guardrails ran.
  const { meta } = await gw.chat.completions
    .create({ model: 'local-chat', messages: [{ role: 'user', content: 'nothing secret' }], gw_guardrail_ids: [guardrailId] })
    .withMeta();
  assert.ok(meta.guardrailsApplied.includes('client-secret-guard'), JSON.stringify(meta.headers));

  let logs = await gw.guardrails.logs({ limit: 50 });
  for (let attempt = 0; attempt < 50 && !logs.data.some((entry) => entry.request_id === error.requestID); attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    logs = await gw.guardrails.logs({ limit: 50 });
  }
  assert.ok(logs.data.some((entry) => entry.request_id === error.requestID && entry.guardrail_name === 'client-secret-guard'));
});

test('prompts: list, info and diff (outside /v1), and the template version in the metadata', async () => {
  const created = await adminRequest(running, 'POST', '/api/admin/prompts', {
    org_id: running.orgId,
    name: 'client-greeting',
    messages: [{ role: 'user', content: 'Say hello to {{ name }}' }],
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const promptId = (created.body as { id: string }).id;
  const second = await adminRequest(running, 'POST', `/api/admin/prompts/${promptId}/versions`, {
    org_id: running.orgId,
    messages: [{ role: 'user', content: 'Say goodbye to {{ name }}' }],
  });
  assert.equal(second.status, 200, JSON.stringify(second.body));

  const list = await gw.prompts.list();
  assert.ok(list.data.some((prompt) => prompt.id === promptId));
  const info = await gw.prompts.info(promptId);
  assert.equal(info.latest_version, 2);
  assert.deepEqual(
    info.versions.map((version) => version.version).sort(),
    [1, 2],
  );
  const diff = await gw.prompts.diff({ prompt_id: promptId, v1: 1, v2: 2 });
  assert.match(diff.diff, /hello/);
  assert.match(diff.diff, /goodbye/);

  const { meta } = await gw.chat.completions
    .create({
      model: 'local-chat',
      messages: [{ role: 'user', content: 'hi' }],
      gw_prompt_template_id: promptId,
      gw_prompt_variables: { name: 'Ada' },
      gw_prompt_version: 1,
    })
    .withMeta();
  assert.equal(meta.promptVersion, 1);
});

test('alert channel endpoints (outside /v1)', async () => {
  // Webhook urls must be public HTTPS addresses; a loopback one is refused at creation.
  await assert.rejects(
    gw.channels.create({ name: 'local', channel_type: 'webhook', config: { url: 'https://127.0.0.1/hook' } }),
    (error: unknown) => error instanceof BadRequestError,
  );
  const { data: channel, meta } = await gw.channels
    .create({ name: 'ops mail', channel_type: 'email', config: { to: ['ops@example.com'] } })
    .withMeta();
  assert.equal(channel.channel_type, 'email');
  assert.equal(channel.object, 'alert_channel');
  assert.match(meta.requestId ?? '', /^req_/);
  // The test call goes through the stored configuration; without SMTP on this gateway it reports the failure.
  const result = await gw.channels.test(channel.id);
  assert.equal(typeof result.delivered, 'boolean');
  if (!result.delivered) assert.ok(result.error);
  await assert.rejects(gw.channels.test('no-such-channel'), (error: unknown) => error instanceof NotFoundError);
});
