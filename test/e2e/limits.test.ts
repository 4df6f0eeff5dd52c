import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { FAKE_PNG_BASE64, fakeWav } from '../fakes/fake-openai-media.js';
import { startProviderGateway, type ProviderGateway } from './providers-gateway.js';

const FILE_LIMIT_BYTES = 64 * 1024;

/** A 400 in the spec's error body, naming the offending parameter when the gateway knows it. */
function assertInvalid(answer: { status: number; json: any }, param?: string): void {
  const text = JSON.stringify(answer.json);
  assert.equal(answer.status, 400, text);
  assert.equal(typeof answer.json.error?.message, 'string', text);
  assert.equal(answer.json.error.type, 'invalid_request_error', text);
  assert.equal(typeof answer.json.error.code, 'string', text);
  if (param) assert.match(`${answer.json.error.param ?? ''} ${answer.json.error.message}`, new RegExp(param), text);
}

describe("the spec's Limits table, enforced with a 400 body (local models)", () => {
  let gateway: ProviderGateway;
  const chat = (extra: Record<string, unknown>) =>
    gateway.post('/chat/completions', { model: 'local-chat', messages: [{ role: 'user', content: 'hi' }], ...extra });
  const image = (extra: Record<string, unknown>) => gateway.post('/images/generations', { model: 'local-image', prompt: 'a fox', ...extra });

  before(async () => {
    gateway = await startProviderGateway([], {}, { fileLimitBytes: FILE_LIMIT_BYTES });
  });
  after(async () => gateway?.close());

  test('temperature 0 to 2', async () => {
    for (const temperature of [-0.01, 2.01, 100]) assertInvalid(await chat({ temperature }), 'temperature');
    for (const temperature of [0, 2]) assert.equal((await chat({ temperature })).status, 200, `temperature ${temperature}`);
    assertInvalid(await gateway.post('/completions', { model: 'local-chat', prompt: 'x', temperature: 2.5 }), 'temperature');
  });

  test('presence_penalty and frequency_penalty −2.0 to 2.0', async () => {
    for (const name of ['presence_penalty', 'frequency_penalty']) {
      for (const value of [-2.01, 2.01]) assertInvalid(await chat({ [name]: value }), name);
      for (const value of [-2, 2]) assert.equal((await chat({ [name]: value })).status, 200, `${name} ${value}`);
    }
  });

  test('max_tokens at least 1 (chat and completions), n at least 1', async () => {
    for (const max_tokens of [0, -1, 1.5]) assertInvalid(await chat({ max_tokens }), 'max_tokens');
    assert.equal((await chat({ max_tokens: 1 })).status, 200);
    assertInvalid(await gateway.post('/completions', { model: 'local-chat', prompt: 'x', max_tokens: 0 }), 'max_tokens');
    assertInvalid(await chat({ n: 0 }), 'n');
  });

  test('user at most 200 characters', async () => {
    assertInvalid(await chat({ user: 'u'.repeat(201) }), 'user');
    assert.equal((await chat({ user: 'u'.repeat(200) })).status, 200);
  });

  test('image n 1 to 4 and size one of 1024x1024, 1024x1536, 1536x1024', async () => {
    for (const n of [0, 5, 1.5]) assertInvalid(await image({ n }), 'n');
    for (const size of ['512x512', '1792x1024', 'big']) assertInvalid(await image({ size }), 'size');
    const ok = await image({ n: 4, size: '1536x1024' });
    assert.equal(ok.status, 200);
    assert.equal(ok.json.data.length, 4);
  });

  test('the SDK sees these 400s as BadRequestError', async () => {
    const refused = await gateway.client.images.generate({ model: 'local-image', prompt: 'x', n: 5 }).catch((caught: unknown) => caught);
    assert.ok(refused instanceof OpenAI.BadRequestError, String(refused));
    const hot = await gateway.client.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'x' }], temperature: 3 }).catch((caught: unknown) => caught);
    assert.ok(hot instanceof OpenAI.BadRequestError, String(hot));
  });

  test('image edit: a file that is not an image is 400; a missing image is 400; a file past the limit is 413', async () => {
    const notImage = await gateway.client.images
      .edit({ model: 'local-image', prompt: 'hat', image: await toFile(Buffer.from('just some text, not a picture'), 'fake.png', { type: 'image/png' }) })
      .catch((caught: unknown) => caught);
    assert.ok(notImage instanceof OpenAI.BadRequestError, String(notImage));
    assert.equal((notImage.error as { type?: string }).type, 'invalid_request_error');

    const form = new FormData();
    form.set('model', 'local-image');
    form.set('prompt', 'hat');
    const missing = await fetch(`${gateway.running.baseURL}/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${gateway.running.apiKey}` }, body: form });
    assertInvalid({ status: missing.status, json: await missing.json() }, 'image');

    // A real PNG header followed by padding: an image by its bytes, but past the file limit.
    const large = Buffer.concat([Buffer.from(FAKE_PNG_BASE64, 'base64'), Buffer.alloc(FILE_LIMIT_BYTES + 1024)]);
    const oversize = await gateway.client.images
      .edit({ model: 'local-image', prompt: 'hat', image: await toFile(large, 'large.png', { type: 'image/png' }) })
      .catch((caught: unknown) => caught);
    assert.ok(oversize instanceof OpenAI.APIError, String(oversize));
    assert.equal(oversize.status, 413);
    assert.equal(typeof (oversize.error as { message?: unknown }).message, 'string');

    const audio = Buffer.concat([fakeWav(), Buffer.alloc(FILE_LIMIT_BYTES)]);
    const longAudio = await gateway.client.audio.transcriptions
      .create({ model: 'local-stt', file: await toFile(audio, 'long.wav', { type: 'audio/wav' }) })
      .catch((caught: unknown) => caught);
    assert.ok(longAudio instanceof OpenAI.APIError, String(longAudio));
    assert.equal(longAudio.status, 413);
  });

  test('within every limit, the same calls succeed', async () => {
    const edited = await gateway.client.images.edit({
      model: 'local-image',
      prompt: 'hat',
      image: await toFile(Buffer.from(FAKE_PNG_BASE64, 'base64'), 'small.png', { type: 'image/png' }),
    });
    assert.equal(edited.data?.length, 1);
  });
});
