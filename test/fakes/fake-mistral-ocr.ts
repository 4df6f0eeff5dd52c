import { startFakeUpstream, type FakeUpstream } from './fake-upstream.js';

/** Mistral OCR fake: POST /v1/ocr answers two pages naming the document it was given. */
export function startFakeMistralOcr(): Promise<FakeUpstream> {
  return startFakeUpstream((request) => {
    if (request.url !== '/v1/ocr' || request.method !== 'POST') return { status: 404, body: { message: 'Not found' } };
    if (!String(request.headers.authorization ?? '').startsWith('Bearer ')) return { status: 401, body: { message: 'Unauthorized' } };
    const document = ((request.json ?? {}) as { document?: { type?: string } }).document;
    const dimensions = { dpi: 200, height: 2200, width: 1700 };
    return {
      body: {
        pages: [
          { index: 0, markdown: `# Page 1\n\nSource type: ${document?.type ?? 'unknown'}`, images: [], dimensions },
          { index: 1, markdown: '# Page 2\n\nThe end.', images: [], dimensions },
        ],
        model: 'mistral-ocr-fake',
        usage_info: { pages_processed: 2, doc_size_bytes: 1024 },
      },
    };
  });
}
