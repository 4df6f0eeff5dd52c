import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readJsonFixture, testContext, testTarget } from '../../../test/fakes/fixture-files.js';
import { createMistralOcrAdapter } from './mistral-ocr-adapter.js';

const fixtures = fileURLToPath(new URL('./__fixtures__/', import.meta.url));
const adapter = createMistralOcrAdapter();
const ocr = adapter.translators.ocr!;
const context = testContext(testTarget({ provider: 'mistral', upstreamModel: 'mistral-ocr-latest', apiKey: 'mistral-key' }), { model: 'ocr-public' });

test('ocr request: document URL, image data URI, explicit object', () => {
  const cases: Array<[unknown, unknown]> = [
    ['https://arxiv.org/pdf/2201.04234', { type: 'document_url', document_url: 'https://arxiv.org/pdf/2201.04234' }],
    ['data:application/pdf;base64,JVBERi0=', { type: 'document_url', document_url: 'data:application/pdf;base64,JVBERi0=' }],
    ['data:image/png;base64,iVBORw0KGgo=', { type: 'image_url', image_url: 'data:image/png;base64,iVBORw0KGgo=' }],
    ['https://example.com/receipt.png', { type: 'image_url', image_url: 'https://example.com/receipt.png' }],
    [{ type: 'image_url', image_url: 'https://example.com/x' }, { type: 'image_url', image_url: 'https://example.com/x' }],
  ];
  for (const [document, expected] of cases) {
    const upstream = ocr.buildRequest({ model: 'ocr-public', document }, { ...context, stream: false });
    assert.equal(upstream.url, 'https://api.mistral.ai/v1/ocr');
    assert.equal(upstream.headers.authorization, 'Bearer mistral-key');
    assert.deepEqual(JSON.parse(String(upstream.body)), { model: 'mistral-ocr-latest', document: expected });
  }
});

test('ocr response: pages and pages processed', () => {
  const result = ocr.parseResponse(readJsonFixture(fixtures, 'ocr.response.json'), { ...context, contentType: 'application/json', raw: Buffer.alloc(0) });
  assert.deepEqual(result.body, {
    pages: [
      { index: 0, markdown: '# LEVERAGING UNLABELED DATA\n\nAbstract text.' },
      { index: 1, markdown: '## 1 Introduction\n\nMore text.' },
    ],
    model: 'ocr-public',
    usage_info: { pages_processed: 2 },
  });
  assert.deepEqual(result.usage, { ocrPages: 2 });
});

test('ocr errors', () => {
  assert.equal(adapter.parseError(401, { message: 'Unauthorized', request_id: 'x' }, {}).code, 'upstream_authentication');
  assert.equal(adapter.parseError(422, { object: 'error', message: 'Invalid document', type: 'invalid_request_error' }, {}).code, 'upstream_bad_request');
});
