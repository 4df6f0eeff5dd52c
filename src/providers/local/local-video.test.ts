import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLocalProvider } from './create-local-provider.js';
import { createLocalVideoBackend } from './local-video-backend.js';
import { localTestInvocation } from './local-test-invocation.js';
import { LOCAL_MODELS } from './local-models.js';
import { OPERATIONS } from '../../protocol/endpoints.js';
import { modelPriceSchema } from '../../metering/model-price.js';
import { GatewayError } from '../../errors/gateway-error.js';

function parseBoxes(bytes: Buffer, start = 0, end = bytes.length): Array<{ type: string; body: Buffer }> {
  const boxes: Array<{ type: string; body: Buffer }> = [];
  let offset = start;
  while (offset < end) {
    const size = bytes.readUInt32BE(offset);
    assert.ok(size >= 8 && offset + size <= end, 'box size within the file');
    boxes.push({ type: bytes.toString('latin1', offset + 4, offset + 8), body: bytes.subarray(offset + 8, offset + size) });
    offset += size;
  }
  assert.equal(offset, end);
  return boxes;
}

test('video job: queued → in_progress → completed on the clock, then a valid MP4', async () => {
  let clock = 1_000_000;
  const backend = createLocalVideoBackend({ completionDelayMs: 2000, now: () => clock });
  const { upstreamJobId } = await backend.startVideoJob({ model: 'local-video', prompt: 'a sunrise', seconds: 8, size: '1280x720' });
  assert.deepEqual(await backend.pollVideoJob(upstreamJobId), { status: 'queued', progress: 0 });
  await assert.rejects(backend.fetchVideoContent(upstreamJobId), (error: unknown) => error instanceof GatewayError && error.status === 400);
  clock += 1000;
  assert.deepEqual(await backend.pollVideoJob(upstreamJobId), { status: 'in_progress', progress: 50 });
  clock += 1000;
  assert.deepEqual(await backend.pollVideoJob(upstreamJobId), { status: 'completed', progress: 100 });
  const content = await backend.fetchVideoContent(upstreamJobId);
  assert.equal(content.contentType, 'video/mp4');
  const bytes = Buffer.from(content.bytes);
  const boxes = parseBoxes(bytes);
  assert.deepEqual(boxes.map((box) => box.type), ['ftyp', 'moov', 'mdat']);
  assert.equal(boxes[0].body.toString('latin1', 0, 4), 'isom');
  const [mvhd] = parseBoxes(bytes, 8 + boxes[0].body.length + 8, 8 + boxes[0].body.length + 8 + boxes[1].body.length);
  assert.equal(mvhd.type, 'mvhd');
  assert.equal(mvhd.body.readUInt32BE(12), 1000);
  assert.equal(mvhd.body.readUInt32BE(16), 8000);
  assert.deepEqual(await backend.fetchVideoContent(upstreamJobId), content);

  // The job id carries the job, so a fresh backend (a restarted gateway) still knows it.
  const restarted = createLocalVideoBackend({ now: () => clock });
  assert.equal((await restarted.pollVideoJob(upstreamJobId)).status, 'completed');
  await assert.rejects(restarted.pollVideoJob('lvid_bogus'), (error: unknown) => error instanceof GatewayError && error.status === 404);
});

test('video job: a fail marker fails the job after the delay', async () => {
  let clock = 0;
  const backend = createLocalVideoBackend({ completionDelayMs: 10, now: () => clock });
  const { upstreamJobId } = await backend.startVideoJob({ model: 'local-video', prompt: 'boom [local:fail:500]' });
  clock = 10;
  const state = await backend.pollVideoJob(upstreamJobId);
  assert.equal(state.status, 'failed');
  assert.equal(state.error?.code, 'upstream_bad_response');
});

test('invoking video answers a queued record with the job id and metered seconds', async () => {
  const provider = createLocalProvider({ now: () => 5_000 });
  const outcome = await provider.invoke(localTestInvocation('video', { model: 'local-video', prompt: 'waves', seconds: 6 }));
  assert.equal(outcome.kind, 'json');
  const body = (outcome as { body: { id: string; object: string; status: string; seconds: number } }).body;
  assert.equal(body.object, 'video.generation');
  assert.equal(body.status, 'queued');
  assert.match(body.id, /^lvid_/);
  assert.deepEqual((outcome as { usage?: unknown }).usage, { videoSeconds: 6 });
  assert.equal((await provider.video.pollVideoJob(body.id)).status, 'queued');
});

test('the provider serves every operation and the catalog entries are well formed', () => {
  const provider = createLocalProvider();
  assert.equal(provider.id, 'local');
  assert.deepEqual([...provider.operations].sort(), [...OPERATIONS].sort());
  const served = new Set(LOCAL_MODELS.flatMap((model) => model.operations));
  assert.deepEqual([...served].sort(), [...OPERATIONS].sort());
  assert.equal(new Set(LOCAL_MODELS.map((model) => model.id)).size, LOCAL_MODELS.length);
  for (const model of LOCAL_MODELS) {
    assert.equal(model.ownedBy, 'local');
    assert.match(model.description, /built-in deterministic offline model \(local\)/);
    modelPriceSchema.parse(model.price);
  }
  const chat = LOCAL_MODELS.find((model) => model.id === 'local-chat');
  assert.equal(chat?.price.inputPerMillion, '0.10');
  assert.equal(chat?.price.outputPerMillion, '0.40');
});

test('a shipped model refuses operations it is not listed for', async () => {
  const provider = createLocalProvider();
  const invocation = localTestInvocation('chat', { model: 'local-embed', messages: [{ role: 'user', content: 'hi' }] });
  await assert.rejects(provider.invoke(invocation), (error: unknown) => error instanceof GatewayError && error.code === 'unsupported_model');
});
