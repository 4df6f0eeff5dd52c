import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { FAKE_PNG_BASE64, fakeWav, multipartFieldNames, startFakeOpenAIMedia } from '../fakes/fake-openai-media.js';
import type { FakeUpstream } from '../fakes/fake-upstream.js';
import { assertCostHeader, assertErrorBody, startProviderGateway, type ProviderGateway } from './providers-gateway.js';

const UPSTREAM_KEY = 'sk-proj-e2e-media-upstream-secret-0123456789';

describe('OpenAI media upstream: images, audio, moderations, videos', () => {
  let fake: FakeUpstream;
  let gateway: ProviderGateway;

  before(async () => {
    fake = await startFakeOpenAIMedia();
    const routed = (id: string, upstreamModel: string) => ({ id, provider: 'openai', upstreamModel, baseUrl: `${fake.baseUrl}/v1`, apiKeyEnv: 'OPENAI_KEY' });
    gateway = await startProviderGateway(
      [
        routed('image-model', 'gpt-image-1'),
        routed('image-filtered', 'gpt-image-1'),
        routed('speech-model', 'gpt-4o-mini-tts'),
        routed('stt-model', 'whisper-1'),
        routed('moderation-model', 'omni-moderation-latest'),
        routed('video-model', 'sora-2'),
      ],
      { OPENAI_KEY: UPSTREAM_KEY },
    );
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  test('image generation through the SDK: n and size forwarded, PNGs back as b64_json', async () => {
    const { data: generated, response } = await gateway.client.images
      .generate({ model: 'image-model', prompt: 'a red fox', n: 2, size: '1536x1024' })
      .withResponse();
    assertCostHeader(response.headers);
    assert.equal(generated.data?.length, 2);
    assert.equal(typeof generated.created, 'number');
    const png = Buffer.from(generated.data?.[0].b64_json ?? '', 'base64');
    assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.url, '/v1/images/generations');
    assert.equal(sent.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
    const body = sent.json as Record<string, unknown>;
    assert.equal(body.model, 'gpt-image-1');
    assert.equal(body.prompt, 'a red fox');
    assert.equal(body.n, 2);
    assert.equal(body.size, '1536x1024');
  });

  test('image edit through the SDK: multipart with image and mask reaches the upstream', async () => {
    const png = Buffer.from(FAKE_PNG_BASE64, 'base64');
    const { data: edited, response } = await gateway.client.images
      .edit({
        model: 'image-model',
        prompt: 'add a hat',
        image: await toFile(png, 'fox.png', { type: 'image/png' }),
        mask: await toFile(png, 'mask.png', { type: 'image/png' }),
      })
      .withResponse();
    assertCostHeader(response.headers);
    assert.equal(Buffer.from(edited.data?.[0].b64_json ?? '', 'base64').subarray(1, 4).toString('latin1'), 'PNG');
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.url, '/v1/images/edits');
    assert.match(String(sent.headers['content-type']), /^multipart\/form-data; boundary=/);
    const fields = multipartFieldNames(sent.body);
    for (const name of ['model', 'prompt', 'image', 'mask']) assert.ok(fields.includes(name), `${name} in ${fields.join(',')}`);
    assert.ok(sent.body.includes(png), 'the image bytes are forwarded unchanged');
    assert.ok(sent.body.toString('latin1').includes('gpt-image-1'), 'the upstream model name is sent');
  });

  test('speech through the SDK: binary audio with its content type', async () => {
    const mp3 = await gateway.client.audio.speech.create({ model: 'speech-model', voice: 'alloy', input: 'hello there' });
    assert.equal(mp3.headers.get('content-type'), 'audio/mpeg');
    assertCostHeader(mp3.headers);
    assert.equal(Buffer.from(await mp3.arrayBuffer()).subarray(0, 3).toString('latin1'), 'ID3');
    const sent = fake.requests.at(-1)!.json as Record<string, unknown>;
    assert.deepEqual({ model: sent.model, voice: sent.voice, input: sent.input }, { model: 'gpt-4o-mini-tts', voice: 'alloy', input: 'hello there' });

    const wav = await gateway.client.audio.speech.create({ model: 'speech-model', voice: 'nova', input: 'wave', response_format: 'wav' });
    assert.equal(wav.headers.get('content-type'), 'audio/wav');
    assert.equal(Buffer.from(await wav.arrayBuffer()).subarray(0, 4).toString('latin1'), 'RIFF');
  });

  test('transcription through the SDK: multipart file and language, text back', async () => {
    const { data: transcription, response } = await gateway.client.audio.transcriptions
      .create({ model: 'stt-model', file: await toFile(fakeWav(), 'meeting.wav', { type: 'audio/wav' }), language: 'en' })
      .withResponse();
    assertCostHeader(response.headers);
    assert.equal(transcription.text, 'Transcript of meeting.wav.');
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.url, '/v1/audio/transcriptions');
    const fields = multipartFieldNames(sent.body);
    for (const name of ['model', 'file', 'language']) assert.ok(fields.includes(name), `${name} in ${fields.join(',')}`);
    assert.ok(sent.body.includes(fakeWav()), 'the audio bytes are forwarded unchanged');
  });

  test('moderation through the SDK: flagged, categories and scores with OpenAI names', async () => {
    const moderation = await gateway.client.moderations.create({ model: 'moderation-model', input: 'I will kill you' });
    assert.equal(moderation.results.length, 1);
    assert.equal(moderation.results[0].flagged, true);
    assert.equal(moderation.results[0].categories.violence, true);
    assert.ok(moderation.results[0].category_scores.violence > 0.5);
    assert.equal(typeof moderation.id, 'string');
    assert.equal(moderation.model, 'moderation-model');
    const clean = await gateway.client.moderations.create({ model: 'moderation-model', input: 'what a lovely day' });
    assert.equal(clean.results[0].flagged, false);
    assert.equal((fake.requests.at(-1)!.json as { model?: string }).model, 'omni-moderation-latest');
  });

  test('video over HTTP: queued at once, the runner polls the upstream to completed, content is the upstream bytes', async () => {
    const created = await gateway.post('/videos', { model: 'video-model', prompt: 'waves at dusk', seconds: 4 });
    assert.equal(created.status, 200, JSON.stringify(created.json));
    assertCostHeader(created.headers);
    assert.equal(created.json.object, 'video.generation');
    assert.equal(created.json.status, 'queued');
    const upstreamCreate = fake.requests.find((request) => request.url === '/v1/videos' && request.method === 'POST');
    assert.ok(upstreamCreate, 'the job was created upstream');
    assert.equal((upstreamCreate.json as { model?: string }).model, 'sora-2');

    let record = created.json;
    const statuses = new Set<string>([record.status]);
    for (let attempt = 0; attempt < 60 && record.status !== 'completed' && record.status !== 'failed'; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const polled = await gateway.get(`/videos/${created.json.id}`);
      assert.equal(polled.status, 200);
      record = await polled.json();
      statuses.add(record.status);
    }
    assert.equal(record.status, 'completed', `statuses seen: ${[...statuses].join(', ')}`);
    assert.equal(record.progress, 100);
    assert.ok(
      fake.requests.some((request) => request.method === 'GET' && /^\/v1\/videos\/video_fake_\d+$/.test(request.url)),
      'the runner polled the upstream job',
    );
    const content = await gateway.get(`/videos/${created.json.id}/content`);
    assert.equal(content.status, 200);
    assert.equal(content.headers.get('content-type'), 'video/mp4');
    const bytes = Buffer.from(await content.arrayBuffer());
    assert.equal(bytes.subarray(4, 8).toString('latin1'), 'ftyp');
  });

  test('a content-policy 400 from the image upstream is our 400 content_filtered, key redacted', async () => {
    fake.failNext({
      status: 400,
      body: { error: { message: `Your request was rejected by our safety system (key ${UPSTREAM_KEY}).`, type: 'invalid_request_error', code: 'content_policy_violation' } },
    });
    const refused = await gateway.client.images.generate({ model: 'image-filtered', prompt: 'something' }).catch((caught: unknown) => caught);
    assert.ok(refused instanceof OpenAI.BadRequestError, String(refused));
    assertErrorBody({ error: refused.error }, 400, refused.status, [UPSTREAM_KEY]);
    assert.equal((refused.error as { code?: string }).code, 'content_filtered');
  });
});
