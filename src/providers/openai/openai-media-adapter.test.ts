import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testContext, testTarget } from '../../../test/fakes/fixture-files.js';
import type { GatewayError } from '../../errors/gateway-error.js';
import { encodeWav } from '../local/wav-encoder.js';
import { buildMultipartBody, multipartBoundary } from './multipart-body.js';
import { createOpenAIMediaAdapter } from './openai-media-adapter.js';
import { buildVideoContentRequest, buildVideoStatusRequest, parseVideoJob } from './openai-video-translator.js';
import { OPENAI_COMPATIBLE_PRESETS, findCompatiblePreset } from './presets.js';

const adapter = createOpenAIMediaAdapter();
const target = testTarget({ provider: 'openai', upstreamModel: 'gpt-image-1', apiKey: 'sk-test', baseUrl: 'https://api.openai.com/v1' });
const context = testContext(target, { model: 'image-public' });
const json = (body: unknown) => ({ ...context, contentType: 'application/json', raw: Buffer.from(JSON.stringify(body)) });
const png = { bytes: Buffer.from([0x89, 0x50, 0x4e, 0x47]), filename: 'in.png', contentType: 'image/png' };

test('multipart body: exact bytes, deterministic boundary', () => {
  const boundary = multipartBoundary('req-1');
  assert.equal(boundary, multipartBoundary('req-1'));
  assert.notEqual(boundary, multipartBoundary('req-2'));
  const { body, contentType } = buildMultipartBody([{ name: 'prompt', value: 'a cat' }, { name: 'image', file: { ...png, filename: 'a"b.png' } }], 'B');
  assert.equal(contentType, 'multipart/form-data; boundary=B');
  assert.deepEqual(
    body,
    Buffer.concat([
      Buffer.from('--B\r\nContent-Disposition: form-data; name="prompt"\r\n\r\na cat\r\n--B\r\nContent-Disposition: form-data; name="image"; filename="a%22b.png"\r\nContent-Type: image/png\r\n\r\n'),
      png.bytes,
      Buffer.from('\r\n--B--\r\n'),
    ]),
  );
});

test('image generation: request, response → b64 images and image usage', () => {
  const translator = adapter.translators.image_generation!;
  const upstream = translator.buildRequest({ model: 'image-public', prompt: 'a cat', n: 2, size: '1024x1536', quality: 'high' }, { ...context, stream: false });
  assert.equal(upstream.url, 'https://api.openai.com/v1/images/generations');
  assert.equal(upstream.headers.authorization, 'Bearer sk-test');
  assert.deepEqual(JSON.parse(String(upstream.body)), { model: 'gpt-image-1', prompt: 'a cat', n: 2, size: '1024x1536', quality: 'high' });
  const dalle = testContext(testTarget({ ...target, upstreamModel: 'dall-e-3' }), { model: 'x' });
  assert.equal(JSON.parse(String(translator.buildRequest({ model: 'x', prompt: 'p' }, { ...dalle, stream: false }).body)).response_format, 'b64_json');
  const answer = {
    created: 1713833628,
    data: [{ b64_json: 'iVBORw0KGgo=' }, { b64_json: 'iVBORw0KGgp=' }],
    size: '1024x1536',
    quality: 'high',
    usage: { total_tokens: 100, input_tokens: 50, output_tokens: 50, input_tokens_details: { text_tokens: 10, image_tokens: 40 } },
  };
  const result = translator.parseResponse(answer, json(answer));
  assert.deepEqual(result.body, { created: 1713833628, data: [{ b64_json: 'iVBORw0KGgo=' }, { b64_json: 'iVBORw0KGgp=' }] });
  assert.deepEqual(result.usage, { images: [{ size: '1024x1536', quality: 'high', count: 2 }] });
});

test('image edit: multipart with image and mask from the request files', () => {
  const upstream = adapter.translators.image_edit!.buildRequest(
    { prompt: 'add a hat', n: 1, size: '1024x1024', files: { image: png, mask: { ...png, filename: 'mask.png' } } },
    { ...context, stream: false },
  );
  assert.equal(upstream.url, 'https://api.openai.com/v1/images/edits');
  const boundary = multipartBoundary('req-1');
  assert.equal(upstream.headers['content-type'], `multipart/form-data; boundary=${boundary}`);
  const text = Buffer.from(upstream.body as Buffer).toString('latin1');
  for (const name of ['model', 'prompt', 'image', 'mask', 'n', 'size']) assert.match(text, new RegExp(`name="${name}"`));
  assert.match(text, /name="model"\r\n\r\ngpt-image-1\r\n/);
  assert.match(text, /filename="mask.png"/);
  assert.throws(() => adapter.translators.image_edit!.buildRequest({ prompt: 'x' }, { ...context, stream: false }), /image file is required/);
});

test('speech: JSON request, binary answer with its content type and character usage', () => {
  const translator = adapter.translators.speech!;
  const request = { model: 'tts', input: 'héllo', voice: 'alloy', response_format: 'wav' as const };
  const upstream = translator.buildRequest(request, { ...context, stream: false });
  assert.equal(upstream.url, 'https://api.openai.com/v1/audio/speech');
  assert.deepEqual(JSON.parse(String(upstream.body)), { model: 'gpt-image-1', input: 'héllo', voice: 'alloy', response_format: 'wav' });
  const audio = Buffer.from('RIFF....WAVE');
  const result = translator.parseResponse(audio, { ...context, contentType: 'audio/wav', raw: audio, request } as never);
  assert.equal(result.binary?.contentType, 'audio/wav');
  assert.deepEqual(Buffer.from(result.binary!.bytes), audio);
  assert.deepEqual(result.usage, { speechCharacters: 5 });
});

test('transcription: multipart request, duration usage', () => {
  const translator = adapter.translators.transcription!;
  const upstream = translator.buildRequest(
    { model: 'whisper', language: 'en', files: { file: { bytes: Buffer.from('ID3'), filename: 'a.mp3', contentType: 'audio/mpeg' } } },
    { ...context, stream: false },
  );
  assert.equal(upstream.url, 'https://api.openai.com/v1/audio/transcriptions');
  const text = Buffer.from(upstream.body as Buffer).toString('latin1');
  assert.match(text, /name="response_format"\r\n\r\njson\r\n/);
  assert.match(text, /name="language"\r\n\r\nen\r\n/);
  const answer = { text: 'Hello there.', usage: { type: 'duration', seconds: 3.2 } };
  const result = translator.parseResponse(answer, json(answer));
  assert.deepEqual(result.body, { text: 'Hello there.', duration: 3.2 });
  assert.deepEqual(result.usage, { transcriptionSeconds: 3.2 });
});

test('transcription: text, srt, vtt and verbose_json answered as OpenAI answers them, from JSON asked of the upstream', () => {
  const translator = adapter.translators.transcription!;
  const file = { bytes: Buffer.from('ID3'), filename: 'a.mp3', contentType: 'audio/mpeg' };
  const verbose = {
    task: 'transcribe',
    language: 'english',
    duration: 4.25,
    text: 'Hello there. General Kenobi.',
    segments: [
      { id: 0, start: 0, end: 1.5, text: ' Hello there.' },
      { id: 1, start: 1.5, end: 4.25, text: ' General Kenobi.' },
    ],
  };
  const asked = (format: string) => {
    const request = { model: 'whisper', response_format: format, files: { file } };
    const upstream = Buffer.from(translator.buildRequest(request, { ...context, stream: false }).body as Buffer).toString('latin1');
    return { request, upstreamFormat: /name="response_format"\r\n\r\n(\w+)\r\n/.exec(upstream)![1] };
  };

  const text = asked('text');
  assert.equal(text.upstreamFormat, 'json');
  const textResult = translator.parseResponse({ text: 'Hello there.' }, { ...json({}), request: text.request } as never);
  assert.equal(textResult.binary?.contentType, 'text/plain; charset=utf-8');
  assert.equal(Buffer.from(textResult.binary!.bytes).toString(), 'Hello there.\n');

  const srt = asked('srt');
  assert.equal(srt.upstreamFormat, 'verbose_json');
  const srtResult = translator.parseResponse(verbose, { ...json(verbose), request: srt.request } as never);
  assert.equal(Buffer.from(srtResult.binary!.bytes).toString(), '1\n00:00:00,000 --> 00:00:01,500\nHello there.\n\n2\n00:00:01,500 --> 00:00:04,250\nGeneral Kenobi.\n\n');
  assert.deepEqual(srtResult.usage, { transcriptionSeconds: 4.25 });

  const vtt = asked('vtt');
  const vttResult = translator.parseResponse(verbose, { ...json(verbose), request: vtt.request } as never);
  assert.equal(vttResult.binary?.contentType, 'text/vtt; charset=utf-8');
  assert.equal(Buffer.from(vttResult.binary!.bytes).toString(), 'WEBVTT\n\n00:00:00.000 --> 00:00:01.500\nHello there.\n\n00:00:01.500 --> 00:00:04.250\nGeneral Kenobi.\n\n');

  const full = asked('verbose_json');
  assert.equal(full.upstreamFormat, 'verbose_json');
  assert.deepEqual(translator.parseResponse(verbose, { ...json(verbose), request: full.request } as never).body, verbose, 'segments and language kept');

  assert.throws(() => asked('xml'), (error: GatewayError) => error.code === 'invalid_request' && error.param === 'response_format');
});

test('transcription: a model that reports tokens, not seconds, is billed for the audio measured from the file', () => {
  const translator = adapter.translators.transcription!;
  // 2 s of 8 kHz mono silence.
  const wav = encodeWav(new Int16Array(16_000), 8_000);
  const request = { model: 'gpt-4o-transcribe', files: { file: { bytes: wav, filename: 'a.wav', contentType: 'audio/wav' } } };
  const answer = { text: 'quiet', usage: { type: 'tokens', input_tokens: 40, output_tokens: 2, total_tokens: 42 } };
  const result = translator.parseResponse(answer, { ...json(answer), request } as never);
  assert.deepEqual(result.usage, { transcriptionSeconds: 2 });
});

test('moderation: a multimodal input is sent as its parts', () => {
  const input = [{ type: 'text' as const, text: 'look' }, { type: 'image_url' as const, image_url: { url: 'https://example.com/a.png' } }];
  const upstream = adapter.translators.moderation!.buildRequest({ input }, { ...context, stream: false });
  assert.deepEqual(JSON.parse(String(upstream.body)).input, input);
});

test('moderation: request and response in our shape', () => {
  const translator = adapter.translators.moderation!;
  const upstream = translator.buildRequest({ input: ['a', 'b'] }, { ...context, stream: false });
  assert.equal(upstream.url, 'https://api.openai.com/v1/moderations');
  assert.deepEqual(JSON.parse(String(upstream.body)), { model: 'gpt-image-1', input: ['a', 'b'] });
  const answer = {
    id: 'modr-0d9740456c391e43c445bf0f010940c7',
    model: 'omni-moderation-latest',
    results: [{ flagged: true, categories: { harassment: true, violence: false }, category_scores: { harassment: 0.9, violence: 0.01 }, category_applied_input_types: { harassment: ['text'] } }],
  };
  assert.deepEqual(translator.parseResponse(answer, json(answer)).body, {
    id: 'modr-0d9740456c391e43c445bf0f010940c7',
    model: 'image-public',
    results: [{ flagged: true, categories: { harassment: true, violence: false }, category_scores: { harassment: 0.9, violence: 0.01 } }],
  });
});

test('videos: create, status and content requests, job parsing', () => {
  const translator = adapter.translators.video!;
  const upstream = translator.buildRequest({ model: 'sora', prompt: 'a wave', seconds: 8, size: '1280x720' }, { ...context, stream: false });
  assert.equal(upstream.url, 'https://api.openai.com/v1/videos');
  assert.deepEqual(JSON.parse(String(upstream.body)), { model: 'gpt-image-1', prompt: 'a wave', seconds: '8', size: '1280x720' });
  const job = { id: 'video_123', object: 'video', model: 'sora-2', status: 'queued', progress: 0, created_at: 1712697600, size: '1280x720', seconds: '8' };
  const answer = translator.parseResponse(job, { ...json(job), request: { prompt: 'a wave' } } as never);
  assert.deepEqual(answer.usage, { videoSeconds: 8 }, 'billed for the seconds the upstream will make');
  const withoutSeconds = { ...job, seconds: undefined };
  assert.deepEqual(translator.parseResponse(withoutSeconds, { ...json(withoutSeconds), request: { prompt: 'a wave', seconds: 4 } } as never).usage, { videoSeconds: 4 });
  const created = answer.body;
  assert.deepEqual(created, {
    id: 'video_123', object: 'video.generation', status: 'queued', model: 'image-public', prompt: 'a wave', seconds: 8,
    size: '1280x720', progress: 0, created_at: 1712697600, completed_at: null, error: null,
  });
  assert.equal(buildVideoStatusRequest('video_123', target).url, 'https://api.openai.com/v1/videos/video_123');
  assert.equal(buildVideoContentRequest('video_123', target).url, 'https://api.openai.com/v1/videos/video_123/content');
  const failed = parseVideoJob({ id: 'v', status: 'failed', error: { code: 'moderation_blocked', message: 'Blocked' } }, 'm', 'p', 1);
  assert.deepEqual(failed.error, { code: 'moderation_blocked', message: 'Blocked' });
});

test('presets: the OpenAI-compatible family', () => {
  assert.equal(findCompatiblePreset('groq')?.baseUrl, 'https://api.groq.com/openai/v1');
  assert.equal(findCompatiblePreset('perplexity')?.baseUrl, 'https://api.perplexity.ai');
  assert.deepEqual(
    OPENAI_COMPATIBLE_PRESETS.map((preset) => preset.id),
    ['openai', 'groq', 'together', 'fireworks', 'deepseek', 'xai', 'mistral', 'openrouter', 'perplexity', 'vllm', 'ollama', 'lmstudio'],
  );
});
