import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFakeMistralOcr } from '../fakes/fake-mistral-ocr.js';
import { FAKE_UPSTREAM_MARKER, startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fakes/fake-openai-upstream.js';
import type { FakeUpstream } from '../fakes/fake-upstream.js';
import { assertCostHeader, assertErrorBody, startProviderGateway, type ProviderGateway } from './providers-gateway.js';

const UPSTREAM_KEY = 'mistral-e2e-upstream-secret-0123456789ABCDEF';

describe('Mistral upstream: OCR (raw HTTP) and chat through the compatible preset', () => {
  let ocr: FakeUpstream;
  let chat: FakeOpenAIUpstream;
  let gateway: ProviderGateway;

  before(async () => {
    ocr = await startFakeMistralOcr();
    chat = await startFakeOpenAIUpstream();
    gateway = await startProviderGateway(
      [
        { id: 'mistral-ocr', provider: 'mistral', upstreamModel: 'mistral-ocr-latest', baseUrl: `${ocr.baseUrl}/v1`, apiKeyEnv: 'MISTRAL_KEY' },
        { id: 'mistral-ocr-only', provider: 'mistral-ocr', upstreamModel: 'mistral-ocr-latest', baseUrl: ocr.baseUrl, apiKeyEnv: 'MISTRAL_KEY' },
        { id: 'mistral-small', provider: 'mistral', upstreamModel: 'mistral-small-latest', baseUrl: chat.baseUrl, apiKeyEnv: 'MISTRAL_KEY' },
      ],
      { MISTRAL_KEY: UPSTREAM_KEY },
    );
  });
  after(async () => {
    await gateway?.close();
    await ocr?.close();
    await chat?.close();
  });

  test('OCR of a document URL: pages[{index, markdown}], document_url upstream, cost per page', async () => {
    const answer = await gateway.post('/ocr', { model: 'mistral-ocr', document: 'https://example.com/report.pdf' });
    assert.equal(answer.status, 200, JSON.stringify(answer.json));
    assert.ok(assertCostHeader(answer.headers) > 0);
    assert.deepEqual(
      answer.json.pages.map((page: { index: number; markdown: string }) => [page.index, page.markdown]),
      [
        [0, '# Page 1\n\nSource type: document_url'],
        [1, '# Page 2\n\nThe end.'],
      ],
    );
    const sent = ocr.requests.at(-1)!;
    assert.equal(sent.url, '/v1/ocr');
    assert.equal(sent.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
    assert.deepEqual(sent.json, { model: 'mistral-ocr-latest', document: { type: 'document_url', document_url: 'https://example.com/report.pdf' } });
  });

  test('OCR of an image data URI goes as image_url, through the OCR-only provider too', async () => {
    const image = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const answer = await gateway.post('/ocr', { model: 'mistral-ocr-only', document: image });
    assert.equal(answer.status, 200, JSON.stringify(answer.json));
    assert.equal(answer.json.pages[0].markdown, '# Page 1\n\nSource type: image_url');
    assert.deepEqual((ocr.requests.at(-1)!.json as { document?: unknown }).document, { type: 'image_url', image_url: image });
  });

  test('OCR errors: 500s become 503 after retries; a missing document is 400 before any upstream call', async () => {
    for (let index = 0; index < 3; index++) ocr.failNext({ status: 500, body: { message: `internal error (key ${UPSTREAM_KEY})` } });
    const failed = await gateway.post('/ocr', { model: 'mistral-ocr-only', document: 'https://example.com/x.pdf' });
    assertErrorBody(failed.json, 503, failed.status, [UPSTREAM_KEY]);

    const before = ocr.requests.length;
    const invalid = await gateway.post('/ocr', { model: 'mistral-ocr' });
    assertErrorBody(invalid.json, 400, invalid.status, []);
    assert.equal(ocr.requests.length, before);
  });

  test('chat through the mistral preset: the OpenAI body, minus the parameters Mistral rejects', async () => {
    const completion = await gateway.client.chat.completions.create({
      model: 'mistral-small',
      messages: [{ role: 'user', content: 'bonjour' }],
      seed: 7,
      user: 'customer-1',
      temperature: 0.3,
    });
    assert.match(completion.choices[0].message.content ?? '', new RegExp(FAKE_UPSTREAM_MARKER));
    const sent = chat.received.at(-1)!;
    assert.equal(sent.path, '/v1/chat/completions');
    assert.equal(sent.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
    assert.equal(sent.body.model, 'mistral-small-latest');
    assert.equal(sent.body.temperature, 0.3);
    assert.ok(!('seed' in sent.body) && !('user' in sent.body), 'seed and user are dropped for Mistral');
  });
});
