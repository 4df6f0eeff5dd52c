import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import { startGateway, type RunningGateway } from '../helpers/start-gateway.js';

let gateway: RunningGateway;
let client: OpenAI;

before(async () => {
  gateway = await startGateway();
  client = new OpenAI({ apiKey: gateway.apiKey, baseURL: gateway.baseURL, maxRetries: 0 });
});
after(async () => {
  await gateway?.close();
});

async function post(path: string, body: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${gateway.baseURL}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gateway.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

test('local chat, streaming chat and completions through the SDK', async () => {
  const completion = await client.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'ping' }] });
  assert.match(completion.choices[0].message.content ?? '', /^Local reply to: ping/);
  assert.ok((completion.usage?.prompt_tokens ?? 0) > 0);

  const stream = await client.chat.completions.create({
    model: 'local-chat-mini',
    messages: [{ role: 'user', content: 'ping' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let usage: OpenAI.CompletionUsage | null | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  assert.match(text, /^Local reply to: ping/);
  assert.ok((usage?.completion_tokens ?? 0) > 0);

  const legacy = await client.completions.create({ model: 'local-chat', prompt: 'Once upon a time' });
  assert.equal(legacy.usage?.completion_tokens, 16);
});

test('local embeddings through the SDK (float and its default base64)', async () => {
  const response = await client.embeddings.create({ model: 'local-embed', input: ['alpha', 'beta'], dimensions: 64 });
  assert.deepEqual(response.data.map((item) => item.index), [0, 1]);
  assert.equal(response.data[0].embedding.length, 64);
});

test('local images through the SDK: generation and edit give PNGs', async () => {
  const generated = await client.images.generate({ model: 'local-image', prompt: 'a fox', size: '1024x1536', n: 2 });
  assert.equal(generated.data?.length, 2);
  const png = Buffer.from(generated.data?.[0].b64_json ?? '', 'base64');
  assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
  assert.equal(png.readUInt32BE(16), 1024);
  assert.equal(png.readUInt32BE(20), 1536);
  const edited = await client.images.edit({ model: 'local-image', prompt: 'add a hat', image: await toFile(png, 'in.png', { type: 'image/png' }) });
  const editedPng = Buffer.from(edited.data?.[0].b64_json ?? '', 'base64');
  assert.equal(editedPng.readUInt32BE(20), 1536);
});

test('local speech and transcription round trip through the SDK', async () => {
  const speech = await client.audio.speech.create({ model: 'local-tts', voice: 'alloy', input: 'hello round trip', response_format: 'wav' });
  const wav = Buffer.from(await speech.arrayBuffer());
  assert.equal(wav.toString('latin1', 0, 4), 'RIFF');
  const transcription = await client.audio.transcriptions.create({ model: 'local-stt', file: await toFile(wav, 'speech.wav', { type: 'audio/wav' }) });
  assert.equal(transcription.text, 'hello round trip');
  const mp3 = await client.audio.speech.create({ model: 'local-tts', voice: 'nova', input: 'mp3 please' });
  assert.equal(mp3.headers.get('content-type'), 'audio/mpeg');
  const bytes = Buffer.from(await mp3.arrayBuffer());
  assert.equal(bytes[0], 0xff);
});

test('local moderation through the SDK; rerank, OCR and video over HTTP', async () => {
  const moderation = await client.moderations.create({ model: 'local-moderation', input: 'I will kill you' });
  assert.equal(moderation.results[0].flagged, true);

  const rerank = await post('/rerank', { model: 'local-rerank', query: 'apple pie', documents: ['cars', 'apple pie recipe'], top_n: 1 });
  assert.equal(rerank.status, 200);
  assert.equal(rerank.json.results[0].index, 1);

  const document = `data:text/plain;base64,${Buffer.from('page one').toString('base64')}`;
  const ocr = await post('/ocr', { model: 'local-ocr', document });
  assert.equal(ocr.status, 200);
  assert.deepEqual(ocr.json.pages, [{ index: 0, markdown: 'page one' }]);

  const video = await post('/videos', { model: 'local-video', prompt: 'waves' });
  assert.equal(video.status, 200);
  assert.equal(video.json.status, 'queued');
});

test('the SDK: videos.create (a form, seconds as a string), subtitles from transcriptions, multimodal moderation', async () => {
  const video = await client.videos.create({ model: 'local-video' as never, prompt: 'waves at dusk', seconds: '4' });
  assert.equal(video.status, 'queued');
  assert.equal(Number(video.seconds), 4);
  const badSeconds = await fetch(`${gateway.baseURL}/videos`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gateway.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'local-video', prompt: 'x', seconds: 'four' }),
  });
  assert.equal(badSeconds.status, 400);
  assert.equal((await badSeconds.json()).error.param, 'seconds');

  const speech = await client.audio.speech.create({ model: 'local-tts', voice: 'alloy', input: 'subtitles please', response_format: 'wav' });
  const wav = Buffer.from(await speech.arrayBuffer());
  const srt = await client.audio.transcriptions.create({ model: 'local-stt', file: await toFile(wav, 'a.wav', { type: 'audio/wav' }), response_format: 'srt' });
  assert.match(String(srt), /^1\n00:00:00,000 --> 00:00:\d\d,\d{3}\nsubtitles please\n/);
  const vtt = await client.audio.transcriptions.create({ model: 'local-stt', file: await toFile(wav, 'a.wav', { type: 'audio/wav' }), response_format: 'vtt' });
  assert.match(String(vtt), /^WEBVTT\n\n00:00:00\.000 --> /);

  const moderation = await client.moderations.create({ model: 'local-moderation', input: [{ type: 'text', text: 'I will kill you' }] });
  assert.equal(moderation.results.length, 1);
  assert.equal(moderation.results[0].flagged, true);
});
