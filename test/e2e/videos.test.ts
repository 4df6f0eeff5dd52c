import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminRequest, startGateway, type RunningGateway } from '../helpers/start-gateway.js';

describe('video generation: asynchronous job, polling and content', () => {
  let running: RunningGateway;
  const call = (path: string, key: string, init: RequestInit = {}) =>
    fetch(running.baseURL + path, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });

  before(async () => {
    running = await startGateway();
  });
  after(async () => running?.close());

  test('queued at once, advanced in the background to completed, content is an MP4', async () => {
    const created = await call('/videos', running.apiKey, {
      method: 'POST',
      body: JSON.stringify({ model: 'local-video', prompt: 'a wave [local:sleep:300]', seconds: 4 }),
    });
    assert.equal(created.status, 200);
    const record = await created.json();
    assert.equal(record.object, 'video.generation');
    assert.equal(record.status, 'queued');
    assert.match(record.id, /^video_/);

    const early = await call(`/videos/${record.id}/content`, running.apiKey);
    assert.equal(early.status, 400, 'content before completion is refused');

    let status = record.status;
    const seen = new Set<string>([status]);
    for (let attempt = 0; attempt < 40 && status !== 'completed' && status !== 'failed'; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const polled = await (await call(`/videos/${record.id}`, running.apiKey)).json();
      status = polled.status;
      seen.add(status);
      if (status === 'completed') assert.equal(polled.progress, 100);
    }
    assert.equal(status, 'completed', `statuses seen: ${[...seen].join(', ')}`);
    const content = await call(`/videos/${record.id}/content`, running.apiKey);
    assert.equal(content.status, 200);
    assert.equal(content.headers.get('content-type'), 'video/mp4');
    const bytes = Buffer.from(await content.arrayBuffer());
    assert.equal(bytes.subarray(4, 8).toString('latin1'), 'ftyp');
  });

  test('a failed upstream job ends failed with an error; other orgs cannot see a video', async () => {
    const created = await (
      await call('/videos', running.apiKey, { method: 'POST', body: JSON.stringify({ model: 'local-video', prompt: 'x [local:fail:500] [local:sleep:200]' }) })
    ).json();
    let polled: any = created;
    for (let attempt = 0; attempt < 40 && polled.status !== 'failed' && polled.status !== 'completed'; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      polled = await (await call(`/videos/${created.id}`, running.apiKey)).json();
    }
    assert.equal(polled.status, 'failed');
    assert.ok(polled.error?.message);

    const org = await adminRequest(running, 'POST', '/api/admin/orgs', { name: 'other' });
    const key = await adminRequest(running, 'POST', '/api/admin/keys', { org_id: org.body.id, name: 'other key' });
    const foreign = await call(`/videos/${created.id}`, key.body.key);
    assert.equal(foreign.status, 404);
    const invalid = await call('/videos', running.apiKey, { method: 'POST', body: JSON.stringify({ model: 'local-video' }) });
    assert.equal(invalid.status, 400);
  });
});
