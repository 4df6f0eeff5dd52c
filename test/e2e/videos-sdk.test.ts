import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { formatUsd } from '../../src/metering/format-usd.js';
import { FAKE_PNG_BASE64, startFakeOpenAIMedia } from '../fakes/fake-openai-media.js';
import type { FakeUpstream } from '../fakes/fake-upstream.js';
import { startProviderGateway, type ProviderGateway } from './providers-gateway.js';

const UPSTREAM_KEY = 'sk-proj-e2e-videos-upstream-secret-0123456789';
/** TEST_PRICING's perVideoSecond (providers-gateway.ts), in nano-USD. */
const NANOS_PER_VIDEO_SECOND = 100_000_000;

describe('videos through the OpenAI SDK: the form it sends, the cost, clear refusals', () => {
  let fake: FakeUpstream;
  let gateway: ProviderGateway;

  before(async () => {
    fake = await startFakeOpenAIMedia();
    gateway = await startProviderGateway(
      [{ id: 'video-model', provider: 'openai', upstreamModel: 'sora-2', baseUrl: `${fake.baseUrl}/v1`, apiKeyEnv: 'OPENAI_KEY' }],
      { OPENAI_KEY: UPSTREAM_KEY },
    );
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  const history = async () => {
    const response = await fetch(`${gateway.running.url}/api/credits/history`, { headers: { authorization: `Bearer ${gateway.running.apiKey}` } });
    return ((await response.json()) as { data: Array<{ request_id: string; units: Record<string, unknown>; cost_nanos: number }> }).data;
  };

  test('videos.create sends multipart with seconds as a string; the upstream gets JSON; the cost of the seconds is on the answer and in the ledger', async () => {
    const { data: video, response } = await gateway.client.videos
      .create({ model: 'video-model' as never, prompt: 'waves at dusk', seconds: '8', size: '1280x720' })
      .withResponse();
    assert.equal(video.status, 'queued');
    assert.match(video.id, /^video_/);
    assert.equal(Number(video.seconds), 8);
    assert.equal(video.size, '1280x720');
    assert.equal(response.headers.get('x-gw-request-cost'), '0.800000000', '8 seconds at 0.10 USD a second');

    const sent = fake.requests.filter((request) => request.method === 'POST' && request.url === '/v1/videos').at(-1);
    assert.equal(sent?.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
    assert.deepEqual(sent?.json, { model: 'sora-2', prompt: 'waves at dusk', seconds: '8', size: '1280x720' });

    const requestId = response.headers.get('x-gw-request-id');
    const charge = (await history()).find((entry) => entry.request_id === requestId);
    assert.deepEqual(charge?.units, { videoSeconds: 8 });
    assert.equal(charge?.cost_nanos, 8 * NANOS_PER_VIDEO_SECOND);

    // The job is ours to poll and download through the same SDK.
    let polled = await gateway.client.videos.retrieve(video.id);
    for (let attempt = 0; attempt < 40 && polled.status !== 'completed'; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 150));
      polled = await gateway.client.videos.retrieve(video.id);
    }
    assert.equal(polled.status, 'completed');
    const content = Buffer.from(await (await gateway.client.videos.downloadContent(video.id)).arrayBuffer());
    assert.equal(content.subarray(4, 8).toString('latin1'), 'ftyp');
  });

  test('a JSON body takes seconds as a number or as digits', async () => {
    for (const seconds of [4, '12']) {
      const created = await gateway.post('/videos', { model: 'video-model', prompt: 'a lighthouse', seconds });
      assert.equal(created.status, 200, JSON.stringify(created.json));
      assert.equal(created.json.seconds, Number(seconds));
      assert.equal(created.headers.get('x-gw-request-cost'), formatUsd(Number(seconds) * NANOS_PER_VIDEO_SECOND));
      const sent = fake.requests.filter((request) => request.method === 'POST' && request.url === '/v1/videos').at(-1);
      assert.equal((sent?.json as { seconds?: unknown }).seconds, String(seconds), 'OpenAI takes seconds as a string');
    }
  });

  test('wrong seconds, size or a reference image are 400s naming the field, as a form or as JSON; nothing reaches the upstream or is charged', async () => {
    const upstreamCalls = fake.requests.length;
    const charges = (await history()).length;
    const refusedBySdk = async (body: Record<string, unknown>) => {
      const error = await gateway.client.videos.create({ model: 'video-model', prompt: 'x', ...body } as never).then(
        () => assert.fail('accepted'),
        (caught: unknown) => caught,
      );
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      return error.error as { message: string; type: string; code: string; param: string };
    };
    for (const seconds of ['4.5', '0', '61', 'four']) {
      const error = await refusedBySdk({ seconds });
      assert.equal(error.param, 'seconds');
      assert.match(error.message, /^Invalid value for 'seconds': expected a whole number of seconds from 1 to 60/);
      assert.equal(error.code, 'invalid_request');
    }
    const size = await refusedBySdk({ size: 'big' });
    assert.equal(size.param, 'size');
    assert.match(size.message, /WIDTHxHEIGHT/);
    const byUrl = await refusedBySdk({ input_reference: { image_url: 'https://example.com/first-frame.png' } });
    assert.equal(byUrl.param, 'input_reference');
    assert.match(byUrl.message, /videos are generated from the prompt alone/);
    const asFile = await refusedBySdk({ input_reference: await toFile(Buffer.from(FAKE_PNG_BASE64, 'base64'), 'frame.png', { type: 'image/png' }) });
    assert.equal(asFile.param, 'input_reference');

    const json = await gateway.post('/videos', { model: 'video-model', prompt: 'x', input_reference: { image_url: 'https://example.com/a.png' } });
    assert.equal(json.status, 400);
    assert.equal(json.json.error.param, 'input_reference');
    assert.match(json.json.error.message, /videos are generated from the prompt alone/);
    const noPrompt = await gateway.post('/videos', { model: 'video-model', seconds: '4' });
    assert.equal(noPrompt.status, 400);
    assert.equal(noPrompt.json.error.message, "Missing required parameter: 'prompt'.");

    assert.equal(fake.requests.length, upstreamCalls, 'no refused request reached the upstream');
    assert.equal((await history()).length, charges, 'no refused request was charged');
  });
});
