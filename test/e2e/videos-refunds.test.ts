import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startFakeUpstream, type FakeUpstream } from '../fakes/fake-upstream.js';
import { startGateway, type RunningGateway } from '../helpers/start-gateway.js';
import { TEST_DATABASES, tempDirectory } from '../helpers/test-databases.js';
import { startProviderGateway, type ProviderGateway } from './providers-gateway.js';

interface Balance {
  balance_nanos: number;
  spent_usd: string;
}

interface HistoryEntry {
  request_id: string;
  units: Record<string, unknown>;
  cost_nanos: number;
}

/** What a refund test reads of a gateway, with the key of the org that made the videos. */
function reader(url: string, apiKey: string) {
  const get = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${apiKey}` } });
    assert.equal(response.status, 200, path);
    return (await response.json()) as T;
  };
  return {
    balance: () => get<Balance>('/api/credits/balance'),
    history: async () => (await get<{ data: HistoryEntry[] }>('/api/credits/history?limit=500')).data,
    video: (id: string) => get<{ status: string; error: { code: string; message: string } | null }>(`/v1/videos/${id}`),
  };
}

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value)) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

const refundsOf = (entries: HistoryEntry[], requestId: string | null) => entries.filter((entry) => entry.units.refundOf === requestId);

describe('video refunds: a job that fails after it was charged gets its charge back, once', () => {
  const running: Array<{ close(): Promise<void> }> = [];
  after(async () => {
    for (const each of running.reverse()) await each.close();
  });

  test('local provider: the failed job is refunded in full; a completed one keeps its charge', async () => {
    const gateway = await startGateway();
    running.push(gateway);
    const client = new OpenAI({ apiKey: gateway.apiKey, baseURL: gateway.baseURL, maxRetries: 0 });
    const read = reader(gateway.url, gateway.apiKey);
    const before = await read.balance();

    const failing = await client.videos.create({ model: 'local-video' as never, prompt: 'a storm [local:fail:500] [local:sleep:300]', seconds: '8' }).withResponse();
    const completing = await client.videos.create({ model: 'local-video' as never, prompt: 'a calm sea [local:sleep:300]', seconds: '4' }).withResponse();
    const failingCost = Math.round(Number(failing.response.headers.get('x-gw-request-cost')) * 1e9);
    const completingCost = Math.round(Number(completing.response.headers.get('x-gw-request-cost')) * 1e9);
    assert.ok(failingCost > 0 && completingCost > 0, 'both creations were charged');

    const failed = await eventually(() => read.video(failing.data.id), (video) => video.status === 'failed', 'the job to fail');
    assert.ok(failed.error?.message);
    await eventually(() => read.video(completing.data.id), (video) => video.status === 'completed', 'the other job to complete');
    const after = await eventually(read.balance, (balance) => balance.balance_nanos === before.balance_nanos - completingCost, 'the refund');

    const entries = await read.history();
    const failingRequest = failing.response.headers.get('x-gw-request-id');
    const [refund] = refundsOf(entries, failingRequest);
    assert.equal(refund?.cost_nanos, -failingCost, 'the whole charge is given back');
    assert.equal(refund?.request_id, `${failingRequest}:refund`);
    assert.deepEqual(refundsOf(entries, completing.response.headers.get('x-gw-request-id')), [], 'a completed job keeps its charge');
    assert.equal(after.spent_usd, (completingCost / 1e9).toFixed(9));
  });

  test('OpenAI upstream: a job the upstream fails is refunded; the record keeps the upstream error', async () => {
    const jobs = new Map<string, number>();
    const fake: FakeUpstream = await startFakeUpstream((request) => {
      if (request.method === 'POST' && request.url === '/v1/videos') {
        const id = `video_upstream_${jobs.size + 1}`;
        jobs.set(id, 0);
        return { body: { id, object: 'video', status: 'queued', progress: 0, created_at: 1_700_000_000, seconds: '8', size: '720x1280' } };
      }
      const id = /^\/v1\/videos\/([^/]+)$/.exec(request.url)?.[1];
      if (request.method === 'GET' && id && jobs.has(id)) {
        return {
          body: {
            id, object: 'video', status: 'failed', progress: 0, created_at: 1_700_000_000, seconds: '8', size: '720x1280',
            error: { code: 'moderation_blocked', message: 'The prompt was blocked by moderation.' },
          },
        };
      }
      return { status: 404, body: { error: { message: `Unknown path ${request.url}`, type: 'invalid_request_error' } } };
    });
    running.push(fake);
    const gateway: ProviderGateway = await startProviderGateway(
      [{ id: 'video-model', provider: 'openai', upstreamModel: 'sora-2', baseUrl: `${fake.baseUrl}/v1`, apiKeyEnv: 'OPENAI_KEY' }],
      { OPENAI_KEY: 'sk-proj-e2e-video-refunds-0123456789' },
    );
    running.push(gateway);
    const read = reader(gateway.running.url, gateway.running.apiKey);
    const before = await read.balance();

    const { data: video, response } = await gateway.client.videos.create({ model: 'video-model' as never, prompt: 'a riot', seconds: '8' }).withResponse();
    assert.equal(response.headers.get('x-gw-request-cost'), '0.800000000');
    const failed = await eventually(() => read.video(video.id), (record) => record.status === 'failed', 'the job to fail');
    assert.deepEqual(failed.error, { code: 'moderation_blocked', message: 'The prompt was blocked by moderation.' });
    await eventually(read.balance, (balance) => balance.balance_nanos === before.balance_nanos, 'the refund');
    const [refund] = refundsOf(await read.history(), response.headers.get('x-gw-request-id'));
    assert.equal(refund?.cost_nanos, -800_000_000);
  });

  test('across restarts: a job that fails while no gateway runs is refunded by the next one, and never again', async () => {
    const database = TEST_DATABASES.find((candidate) => candidate.name === 'sqlite')!;
    const databaseUrl = await database.create();
    const dataDir = tempDirectory();
    const start = () => startGateway({ config: { databaseUrl, dataDir } });

    const first: RunningGateway = await start();
    const apiKey = first.apiKey;
    const client = new OpenAI({ apiKey, baseURL: first.baseURL, maxRetries: 0 });
    const before = await reader(first.url, apiKey).balance();
    const { data: video, response } = await client.videos
      .create({ model: 'local-video' as never, prompt: 'a landslide [local:fail:500] [local:sleep:1500]', seconds: '8' })
      .withResponse();
    const requestId = response.headers.get('x-gw-request-id');
    assert.equal((await reader(first.url, apiKey).video(video.id)).status, 'queued');
    await first.close();
    // The upstream job fails while no gateway is running.
    await new Promise((resolve) => setTimeout(resolve, 1600));

    const second = await start();
    running.push(second);
    const read = reader(second.url, apiKey);
    await eventually(read.balance, (balance) => balance.balance_nanos === before.balance_nanos, 'the refund after the restart');
    assert.equal((await read.video(video.id)).status, 'failed');
    await second.close();
    running.pop();

    const third = await start();
    running.push(third);
    // Several passes of the runner on the restarted gateway.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const readAgain = reader(third.url, apiKey);
    assert.equal((await readAgain.balance()).balance_nanos, before.balance_nanos, 'not refunded a second time');
    assert.equal(refundsOf(await readAgain.history(), requestId).length, 1);
  });
});
