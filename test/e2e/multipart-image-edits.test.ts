import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { FAKE_PNG_BASE64, multipartFieldNames } from '../fakes/fake-openai-media.js';
import { startFakeUpstream, type FakeUpstream } from '../fakes/fake-upstream.js';
import { startProviderGateway, type ProviderGateway } from './providers-gateway.js';

const PNG = Buffer.from(FAKE_PNG_BASE64, 'base64');

/** The filenames of a multipart body's file parts, in order. */
function filenames(body: Buffer): string[] {
  return [...body.toString('latin1').matchAll(/; filename="([^"]*)"/g)].map((match) => match[1]);
}

describe('image edits with several images (the SDK sends a list as image[]): every one reaches the upstream', () => {
  let fake: FakeUpstream;
  let gateway: ProviderGateway;

  before(async () => {
    // OpenAI's edits endpoint takes `image` or, for several, `image[]`.
    fake = await startFakeUpstream((request) => {
      const fields = multipartFieldNames(request.body);
      if (request.url !== '/v1/images/edits' || !(fields.includes('image') || fields.includes('image[]'))) {
        return { status: 400, body: { error: { message: 'image is required', type: 'invalid_request_error' } } };
      }
      return { body: { created: 1_700_000_000, data: [{ b64_json: FAKE_PNG_BASE64 }] } };
    });
    gateway = await startProviderGateway(
      [{ id: 'image-model', provider: 'openai', upstreamModel: 'gpt-image-1', baseUrl: `${fake.baseUrl}/v1`, apiKeyEnv: 'OPENAI_KEY' }],
      { OPENAI_KEY: 'sk-proj-e2e-image-edits-0123456789' },
    );
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  test('three images and a mask: all three go upstream as image[] in the order sent, then the mask', async () => {
    const images = await Promise.all(['sofa.png', 'lamp.png', 'rug.png'].map((name) => toFile(PNG, name, { type: 'image/png' })));
    const { data, response } = await gateway.client.images
      .edit({ model: 'image-model', prompt: 'a living room with these', image: images, mask: await toFile(PNG, 'mask.png', { type: 'image/png' }) })
      .withResponse();
    assert.equal(data.data?.length, 1);
    assert.ok(response.headers.get('x-gw-request-cost'));
    const sent = fake.requests.at(-1)!;
    assert.deepEqual(
      multipartFieldNames(sent.body).filter((name) => name.startsWith('image') || name === 'mask'),
      ['image[]', 'image[]', 'image[]', 'mask'],
    );
    assert.deepEqual(filenames(sent.body), ['sofa.png', 'lamp.png', 'rug.png', 'mask.png']);
  });

  test('sixteen images and a mask, OpenAI\'s most for an edit, all go upstream', async () => {
    const images = await Promise.all(Array.from({ length: 16 }, (_, index) => toFile(PNG, `item-${index}.png`, { type: 'image/png' })));
    await gateway.client.images.edit({ model: 'image-model', prompt: 'a collage', image: images, mask: await toFile(PNG, 'mask.png', { type: 'image/png' }) });
    const sent = fake.requests.at(-1)!;
    assert.deepEqual(filenames(sent.body), [...images.map((_, index) => `item-${index}.png`), 'mask.png']);
  });

  test('one image still goes as `image`', async () => {
    await gateway.client.images.edit({ model: 'image-model', prompt: 'a hat', image: [await toFile(PNG, 'fox.png', { type: 'image/png' })] });
    const fields = multipartFieldNames(fake.requests.at(-1)!.body);
    assert.ok(fields.includes('image') && !fields.includes('image[]'), fields.join(', '));
  });

  test('a file in the list that is not an image is a 400 naming it; past the file count a 413; neither reaches the upstream', async () => {
    const upstreamCalls = fake.requests.length;
    const refusal = async (image: Awaited<ReturnType<typeof toFile>>[]) =>
      gateway.client.images.edit({ model: 'image-model', prompt: 'x', image }).then(
        () => assert.fail('accepted'),
        (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
      );
    const notImage = await refusal([await toFile(PNG, 'a.png', { type: 'image/png' }), await toFile(Buffer.from('hello'), 'notes.txt', { type: 'image/png' })]);
    assert.equal(notImage.status, 400);
    assert.equal((notImage.error as { param?: string }).param, 'image');
    assert.match(notImage.message, /'notes\.txt' is not a PNG, JPEG or WebP image/);

    const tooMany = await refusal(await Promise.all(Array.from({ length: 17 }, (_, index) => toFile(PNG, `${index}.png`, { type: 'image/png' }))));
    assert.equal(tooMany.status, 400);
    assert.match(tooMany.message, /at most 16 'image' files; this form has 17/);
    const pastFileCount = await refusal(await Promise.all(Array.from({ length: 18 }, (_, index) => toFile(PNG, `${index}.png`, { type: 'image/png' }))));
    assert.equal(pastFileCount.status, 413);
    assert.match(pastFileCount.message, /at most 17 files/);
    assert.equal(fake.requests.length, upstreamCalls);
  });
});
