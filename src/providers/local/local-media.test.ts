import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inflateSync } from 'node:zlib';
import { createLocalProvider } from './create-local-provider.js';
import { localTestInvocation } from './local-test-invocation.js';
import { crc32, oggCrc32 } from './crc32.js';
import type { Outcome } from '../../pipeline/stage.js';
import type { ImageResponse } from '../../protocol/images.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { LOCAL_VOICES } from './local-speech.js';

const provider = createLocalProvider({ now: () => 1_700_000_000_000 });

function isInvalidRequest(param: string) {
  return (error: unknown): boolean => error instanceof GatewayError && error.status === 400 && error.param === param;
}

/** Checks the PNG signature, every chunk CRC, and that IDAT inflates to exactly the rows IHDR promises. */
function checkPng(bytes: Buffer): { width: number; height: number } {
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  let offset = 8;
  const types: string[] = [];
  const idat: Buffer[] = [];
  let width = 0;
  let height = 0;
  while (offset < bytes.length) {
    const length = bytes.readUInt32BE(offset);
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    const data = bytes.subarray(offset + 8, offset + 8 + length);
    assert.equal(bytes.readUInt32BE(offset + 8 + length), crc32(bytes.subarray(offset + 4, offset + 8 + length)), `${type} CRC`);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      assert.deepEqual([...data.subarray(8)], [8, 2, 0, 0, 0]);
    }
    if (type === 'IDAT') idat.push(data);
    types.push(type);
    offset += 12 + length;
  }
  assert.deepEqual(types, ['IHDR', 'IDAT', 'IEND']);
  assert.equal(inflateSync(Buffer.concat(idat)).length, height * (width * 3 + 1));
  return { width, height };
}

test('image generation: valid PNGs of the requested size, n of them, deterministic', async () => {
  const request = { model: 'local-image', prompt: 'a red fox in snow', size: '1536x1024', n: 2 };
  const outcome = await provider.invoke(localTestInvocation('image_generation', request));
  assert.equal(outcome.kind, 'json');
  const body = (outcome as { body: ImageResponse }).body;
  assert.equal(body.data.length, 2);
  assert.equal(body.created, 1_700_000_000);
  for (const image of body.data) assert.deepEqual(checkPng(Buffer.from(image.b64_json, 'base64')), { width: 1536, height: 1024 });
  assert.notEqual(body.data[0].b64_json, body.data[1].b64_json);
  assert.deepEqual((outcome as { usage?: unknown }).usage, { images: [{ size: '1536x1024', quality: 'auto', count: 2 }] });
  const again = (await provider.invoke(localTestInvocation('image_generation', request))) as { body: ImageResponse };
  assert.deepEqual(again.body, body);

  const fallback = (await provider.invoke(localTestInvocation('image_generation', { model: 'local-image', prompt: 'x' }))) as {
    body: ImageResponse;
  };
  assert.deepEqual(checkPng(Buffer.from(fallback.body.data[0].b64_json, 'base64')), { width: 1024, height: 1024 });
});

test('image edit: keeps the input PNG size; rejects non-images with 400', async () => {
  const generated = (await provider.invoke(
    localTestInvocation('image_generation', { model: 'local-image', prompt: 'base', size: '1024x1536' }),
  )) as { body: ImageResponse };
  const input = Buffer.from(generated.body.data[0].b64_json, 'base64');
  const files = { image: { bytes: input, filename: 'in.png', contentType: 'image/png' } };
  const edited = await provider.invoke(localTestInvocation('image_edit', { model: 'local-image', prompt: 'add a hat' }, { files }));
  const body = (edited as { body: ImageResponse }).body;
  assert.deepEqual(checkPng(Buffer.from(body.data[0].b64_json, 'base64')), { width: 1024, height: 1536 });
  assert.notEqual(body.data[0].b64_json, generated.body.data[0].b64_json);

  const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const fromJpeg = await provider.invoke(
    localTestInvocation('image_edit', { model: 'local-image', prompt: 'p' }, { files: { 'image[]': { bytes: jpeg, filename: 'a.jpg', contentType: 'image/jpeg' } } }),
  );
  assert.deepEqual(checkPng(Buffer.from((fromJpeg as { body: ImageResponse }).body.data[0].b64_json, 'base64')), { width: 1024, height: 1024 });

  const text = { image: { bytes: Buffer.from('not an image at all'), filename: 'a.png', contentType: 'image/png' } };
  await assert.rejects(provider.invoke(localTestInvocation('image_edit', { model: 'local-image', prompt: 'p' }, { files: text })), isInvalidRequest('image'));
  const badMask = { ...files, mask: { bytes: Buffer.from('GIF89a'), filename: 'm.gif', contentType: 'image/gif' } };
  await assert.rejects(provider.invoke(localTestInvocation('image_edit', { model: 'local-image', prompt: 'p' }, { files: badMask })), isInvalidRequest('mask'));
  await assert.rejects(provider.invoke(localTestInvocation('image_edit', { model: 'local-image', prompt: 'p' })), isInvalidRequest('image'));
});

test('image edit: every image counts, in order, and the mask too', async () => {
  const png = async (prompt: string) =>
    Buffer.from(((await provider.invoke(localTestInvocation('image_generation', { model: 'local-image', prompt, size: '1024x1024' }))) as { body: ImageResponse }).body.data[0].b64_json, 'base64');
  const [first, second, third] = await Promise.all([png('a'), png('b'), png('c')]);
  const file = (bytes: Buffer, name: string) => ({ bytes, filename: name, contentType: 'image/png' });
  const edit = async (images: Buffer[], mask?: Buffer) => {
    const [head, ...more] = images.map((bytes, index) => file(bytes, `${index}.png`));
    const files = { image: more.length ? { ...head!, more } : head!, ...(mask ? { mask: file(mask, 'mask.png') } : {}) };
    const outcome = await provider.invoke(localTestInvocation('image_edit', { model: 'local-image', prompt: 'merge' }, { files }));
    return (outcome as { body: ImageResponse }).body.data[0].b64_json;
  };
  const pair = await edit([first, second]);
  assert.equal(await edit([first, second]), pair, 'deterministic');
  assert.notEqual(await edit([first, third]), pair, 'the second image changes the edit');
  assert.notEqual(await edit([second, first]), pair, 'so does the order');
  assert.notEqual(await edit([first]), pair);
  assert.notEqual(await edit([first, second], third), pair, 'and the mask');
  await assert.rejects(edit([first, Buffer.from('text')]), isInvalidRequest('image'));
});

async function speech(request: Record<string, unknown>): Promise<{ contentType: string; bytes: Buffer; usage?: unknown }> {
  const outcome = await provider.invoke(localTestInvocation('speech', { model: 'local-tts', voice: 'alloy', ...request }));
  assert.equal(outcome.kind, 'binary');
  const binary = outcome as Extract<Outcome, { kind: 'binary' }>;
  return { contentType: binary.contentType, bytes: Buffer.from(binary.bytes), usage: binary.usage };
}

test('speech wav: RIFF sizes, PCM 16-bit mono 24 kHz, 60 ms per character, deterministic', async () => {
  const input = 'Hello local voice';
  const wav = await speech({ input, response_format: 'wav' });
  assert.equal(wav.contentType, 'audio/wav');
  assert.deepEqual(wav.usage, { speechCharacters: input.length });
  const bytes = wav.bytes;
  assert.equal(bytes.toString('latin1', 0, 4), 'RIFF');
  assert.equal(bytes.readUInt32LE(4), bytes.length - 8);
  assert.equal(bytes.toString('latin1', 8, 12), 'WAVE');
  assert.equal(bytes.toString('latin1', 12, 16), 'fmt ');
  assert.equal(bytes.readUInt32LE(16), 16);
  assert.equal(bytes.readUInt16LE(20), 1);
  assert.equal(bytes.readUInt16LE(22), 1);
  assert.equal(bytes.readUInt32LE(24), 24_000);
  assert.equal(bytes.readUInt16LE(34), 16);
  const dataOffset = bytes.indexOf('data', 36, 'latin1');
  const dataSize = bytes.readUInt32LE(dataOffset + 4);
  assert.equal(dataOffset + 8 + dataSize, bytes.length);
  assert.equal(dataSize, Math.round(input.length * 0.06 * 24_000) * 2);
  assert.deepEqual((await speech({ input, response_format: 'wav' })).bytes, bytes);
  const other = await speech({ input, response_format: 'wav', voice: 'onyx' });
  assert.notDeepEqual(other.bytes, bytes);

  const long = await speech({ input: 'x'.repeat(4000), response_format: 'wav' });
  const longData = long.bytes.readUInt32LE(long.bytes.indexOf('data', 36, 'latin1') + 4);
  assert.equal(longData, 30 * 24_000 * 2);
});

test('speech mp3 (the default): frame sync and correct frame lengths throughout', async () => {
  const mp3 = await speech({ input: 'Hello there' });
  assert.equal(mp3.contentType, 'audio/mpeg');
  const bytes = mp3.bytes;
  let offset = 0;
  let frames = 0;
  while (offset < bytes.length) {
    assert.equal(bytes[offset], 0xff);
    assert.equal(bytes[offset + 1] & 0xe0, 0xe0, 'frame sync');
    assert.equal((bytes[offset + 1] >> 3) & 3, 3, 'MPEG-1');
    assert.equal((bytes[offset + 1] >> 1) & 3, 1, 'Layer III');
    const bitrate = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320][bytes[offset + 2] >> 4] * 1000;
    const rate = [44100, 48000, 32000][(bytes[offset + 2] >> 2) & 3];
    const padding = (bytes[offset + 2] >> 1) & 1;
    offset += Math.floor((144 * bitrate) / rate) + padding;
    frames++;
  }
  assert.equal(offset, bytes.length);
  assert.equal(frames, Math.ceil((11 * 0.06 * 48_000) / 1152));
});

test('speech opus: Ogg pages with capture pattern, valid CRCs, OpusHead, OpusTags, EOS granule', async () => {
  const opus = await speech({ input: 'Hello opus', response_format: 'opus' });
  assert.equal(opus.contentType, 'audio/ogg');
  const bytes = opus.bytes;
  const pages: Array<{ flags: number; granule: bigint; sequence: number; body: Buffer }> = [];
  let offset = 0;
  while (offset < bytes.length) {
    assert.equal(bytes.toString('latin1', offset, offset + 4), 'OggS');
    const segments = bytes[offset + 26];
    const bodyLength = [...bytes.subarray(offset + 27, offset + 27 + segments)].reduce((sum, value) => sum + value, 0);
    const page = Buffer.from(bytes.subarray(offset, offset + 27 + segments + bodyLength));
    const stored = page.readUInt32LE(22);
    page.writeUInt32LE(0, 22);
    assert.equal(oggCrc32(page), stored, 'page CRC');
    pages.push({ flags: page[5], granule: page.readBigInt64LE(6), sequence: page.readUInt32LE(18), body: page.subarray(27 + segments) });
    offset += page.length;
  }
  assert.equal(pages[0].flags, 0x02);
  assert.equal(pages[0].body.toString('latin1', 0, 8), 'OpusHead');
  assert.equal(pages[1].body.toString('latin1', 0, 8), 'OpusTags');
  assert.deepEqual(pages.map((page) => page.sequence), pages.map((_, index) => index));
  const last = pages[pages.length - 1];
  assert.equal(last.flags, 0x04);
  assert.equal(last.granule, BigInt(Math.round(10 * 0.06 * 48_000) + 312));
});

test('speech rejects unknown voices naming the allowed list', async () => {
  await assert.rejects(speech({ input: 'x', voice: 'robot' }), (error: unknown) => {
    assert.ok(isInvalidRequest('voice')(error));
    for (const voice of LOCAL_VOICES) assert.match((error as Error).message, new RegExp(voice));
    return true;
  });
});

async function transcribe(bytes: Buffer, extra: Record<string, unknown> = {}): Promise<Outcome> {
  return provider.invoke(
    localTestInvocation('transcription', { model: 'local-stt', ...extra }, { files: { file: { bytes, filename: 'a', contentType: 'audio/wav' } } }),
  );
}

test('transcription recovers text from local wav and opus, and meters seconds', async () => {
  const input = 'The quick brown fox — naïve café';
  for (const format of ['wav', 'opus']) {
    const audio = await speech({ input, response_format: format });
    const outcome = await transcribe(audio.bytes);
    assert.equal(outcome.kind, 'json');
    assert.deepEqual((outcome as { body: unknown }).body, { text: input });
    assert.deepEqual((outcome as { usage?: unknown }).usage, { transcriptionSeconds: Math.round([...input].length * 60) / 1000 });
  }
  const verbose = await transcribe((await speech({ input, response_format: 'wav' })).bytes, { response_format: 'verbose_json' });
  assert.equal((verbose as { body: { duration: number } }).body.duration, [...input].length * 0.06);
  const text = await transcribe((await speech({ input, response_format: 'wav' })).bytes, { response_format: 'text' });
  assert.equal(Buffer.from((text as { bytes: Uint8Array }).bytes).toString(), `${input}\n`);
});

test('transcription of audio without embedded text reports its length; non-audio is a 400', async () => {
  const mp3 = await speech({ input: 'x'.repeat(50) });
  const outcome = await transcribe(mp3.bytes);
  const frames = Math.ceil((50 * 0.06 * 48_000) / 1152);
  const seconds = Math.round(((frames * 1152) / 48_000) * 1000) / 1000;
  assert.deepEqual((outcome as { body: unknown }).body, { text: `[local transcription of ${Math.round(seconds * 10) / 10} seconds of audio]` });
  assert.deepEqual((outcome as { usage?: unknown }).usage, { transcriptionSeconds: seconds });
  await assert.rejects(transcribe(Buffer.from('%PDF-1.4 definitely not audio')), isInvalidRequest('file'));
  await assert.rejects(provider.invoke(localTestInvocation('transcription', { model: 'local-stt' })), isInvalidRequest('file'));
});
