import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deflateSync } from 'node:zlib';
import { encode } from 'gpt-tokenizer/encoding/cl100k_base';
import { createLocalProvider } from './create-local-provider.js';
import { localTestInvocation } from './local-test-invocation.js';
import { decodeEmbeddingBase64, type EmbeddingResponse } from '../../protocol/embeddings.js';
import { MODERATION_CATEGORIES, moderationRequestSchema, type ModerationResponse } from '../../protocol/moderations.js';
import type { RerankResponse } from '../../protocol/rerank.js';
import type { OcrResponse } from '../../protocol/ocr.js';
import type { Outcome } from '../../pipeline/stage.js';
import type { Operation } from '../../protocol/endpoints.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { bm25Scores } from './bm25.js';

const provider = createLocalProvider();

async function json<T>(operation: Operation, request: Record<string, unknown>): Promise<{ body: T; outcome: Outcome }> {
  const outcome = await provider.invoke(localTestInvocation(operation, request));
  assert.equal(outcome.kind, 'json');
  return { body: (outcome as { body: T }).body, outcome };
}

function cosine(left: number[], right: number[]): number {
  return left.reduce((sum, value, index) => sum + value * right[index], 0);
}

test('embeddings: deterministic, normalised, requested dimensions, input order', async () => {
  const inputs = ['the cat sat on the mat', 'a cat sat on a mat', 'quarterly revenue grew strongly'];
  const { body, outcome } = await json<EmbeddingResponse>('embedding', { model: 'local-embed', input: inputs });
  const again = await json<EmbeddingResponse>('embedding', { model: 'local-embed', input: inputs });
  assert.deepEqual(body, again.body);
  assert.deepEqual(body.data.map((item) => item.index), [0, 1, 2]);
  const vectors = body.data.map((item) => item.embedding as number[]);
  for (const vector of vectors) {
    assert.equal(vector.length, 256);
    assert.ok(Math.abs(Math.sqrt(cosine(vector, vector)) - 1) < 1e-5);
  }
  assert.ok(cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2]));
  const tokens = inputs.reduce((sum, input) => sum + encode(input).length, 0);
  assert.deepEqual(body.usage, { prompt_tokens: tokens, total_tokens: tokens });
  assert.deepEqual((outcome as { usage?: unknown }).usage, { inputTokens: tokens });

  const small = await json<EmbeddingResponse>('embedding', { model: 'local-embed', input: 'hello', dimensions: 32 });
  assert.equal((small.body.data[0].embedding as number[]).length, 32);
});

test('embeddings: base64 is little-endian float32 of the same vector', async () => {
  const float = await json<EmbeddingResponse>('embedding', { model: 'local-embed', input: 'hello world' });
  const base64 = await json<EmbeddingResponse>('embedding', { model: 'local-embed', input: 'hello world', encoding_format: 'base64' });
  assert.equal(typeof base64.body.data[0].embedding, 'string');
  assert.deepEqual(decodeEmbeddingBase64(base64.body.data[0].embedding as string), float.body.data[0].embedding);
});

test('embeddings: token-array input embeds like its text', async () => {
  const text = await json<EmbeddingResponse>('embedding', { model: 'local-embed', input: 'hello world' });
  const tokens = await json<EmbeddingResponse>('embedding', { model: 'local-embed', input: encode('hello world') });
  assert.deepEqual(tokens.body.data[0].embedding, text.body.data[0].embedding);
});

test('moderation: keywords flag their category, clean text passes', async () => {
  const { body } = await json<ModerationResponse>('moderation', {
    input: ['I will kill you, you idiot', 'What a lovely sunny day'],
    model: 'local-moderation',
  });
  assert.equal(body.results.length, 2);
  const [bad, clean] = body.results;
  assert.deepEqual(Object.keys(bad.categories).sort(), [...MODERATION_CATEGORIES].sort());
  assert.equal(bad.flagged, true);
  assert.equal(bad.categories['violence'], true);
  assert.equal(bad.categories['harassment/threatening'], true);
  assert.equal(bad.categories['harassment'], true);
  assert.equal(bad.categories['sexual'], false);
  assert.equal(clean.flagged, false);
  for (const result of body.results) {
    for (const score of Object.values(result.category_scores)) assert.ok(score >= 0 && score <= 1);
  }
  assert.equal(body.id, 'modr-req_test');
});

test('moderation: a multimodal input (parts) is one input with one result; image parts are refused by the text-only local model', async () => {
  const { body } = await json<ModerationResponse>('moderation', {
    input: [
      { type: 'text', text: 'I will kill you' },
      { type: 'text', text: 'you idiot' },
    ],
    model: 'local-moderation',
  });
  assert.equal(body.results.length, 1);
  assert.equal(body.results[0].categories['violence'], true);
  await assert.rejects(
    json('moderation', { input: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }], model: 'local-moderation' }),
    (error: GatewayError) => error.code === 'invalid_request' && error.param === 'input',
  );
  const parsed = moderationRequestSchema.safeParse({ input: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] });
  assert.equal(parsed.success, true, 'the shape OpenAI accepts is accepted');
  assert.equal(moderationRequestSchema.safeParse({ input: [{ type: 'audio', audio: 'x' }] }).success, false);
});

test('bm25: a document with more query terms ranks higher; shorter wins ties in term frequency', () => {
  const scores = bm25Scores('red apple pie', [
    'a recipe for red apple pie',
    'apple orchards in autumn',
    'car engines and gearboxes',
    'apple pie apple pie red red, the best red apple pie recipe with a very long description of everything',
  ]);
  assert.ok(scores[0] > scores[1]);
  assert.ok(scores[1] > scores[2]);
  assert.equal(scores[2], 0);
});

test('rerank: sorted most relevant first, top_n, search units', async () => {
  const documents = ['car engines and gearboxes', 'a recipe for red apple pie', { text: 'apple orchards in autumn' }];
  const { body, outcome } = await json<RerankResponse>('rerank', {
    model: 'local-rerank',
    query: 'apple pie',
    documents,
    top_n: 2,
    return_documents: true,
  });
  assert.deepEqual(body.results.map((result) => result.index), [1, 2]);
  assert.equal(body.results[0].document?.text, 'a recipe for red apple pie');
  for (const result of body.results) assert.ok(result.relevance_score > 0 && result.relevance_score < 1);
  assert.ok(body.results[0].relevance_score > body.results[1].relevance_score);
  assert.equal(body.meta.billed_units.search_units, 1);
  assert.deepEqual((outcome as { usage?: unknown }).usage, { searchUnits: 1 });

  const many = await json<RerankResponse>('rerank', {
    model: 'local-rerank',
    query: 'x',
    documents: Array.from({ length: 201 }, (_, index) => `document ${index}`),
  });
  assert.equal(many.body.meta.billed_units.search_units, 3);
  assert.equal(many.body.results.length, 201);
  assert.deepEqual(many.body.results.slice(0, 3).map((result) => result.index), [0, 1, 2]);
});

function dataUri(mediaType: string, content: string | Buffer): string {
  return `data:${mediaType};base64,${Buffer.from(content).toString('base64')}`;
}

function simplePdf(pages: string[], compress: boolean): Buffer {
  const objects: string[] = [];
  const kids = pages.map((_, index) => `${3 + index * 2} 0 R`).join(' ');
  objects.push('1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n');
  objects.push(`2 0 obj\n<< /Type /Pages /Kids [${kids}] /Count ${pages.length} >>\nendobj\n`);
  const parts: Buffer[] = [];
  pages.forEach((text, index) => {
    const pageId = 3 + index * 2;
    objects.push(`${pageId} 0 obj\n<< /Type /Page /Parent 2 0 R /Contents ${pageId + 1} 0 R >>\nendobj\n`);
    const lines = text.split('\n');
    const content = `BT /F1 12 Tf 72 720 Td (${lines[0].replace(/([()\\])/g, '\\$1')}) Tj ${lines
      .slice(1)
      .map((line) => `T* [(${line.slice(0, 3)}) -20 (${line.slice(3)})] TJ`)
      .join(' ')} ET`;
    const stream = compress ? deflateSync(Buffer.from(content, 'latin1')) : Buffer.from(content, 'latin1');
    objects.push(
      `${pageId + 1} 0 obj\n<< /Length ${stream.length}${compress ? ' /Filter /FlateDecode' : ''} >>\nstream\n${stream.toString('latin1')}\nendstream\nendobj\n`,
    );
  });
  parts.push(Buffer.from(`%PDF-1.4\n${objects.join('')}trailer\n<< /Root 1 0 R >>\n%%EOF\n`, 'latin1'));
  return Buffer.concat(parts);
}

test('ocr: text, markdown, html and PDFs page by page', async () => {
  const plain = await json<OcrResponse>('ocr', { model: 'local-ocr', document: dataUri('text/plain', 'page one\fpage two') });
  assert.deepEqual(plain.body.pages, [
    { index: 0, markdown: 'page one' },
    { index: 1, markdown: 'page two' },
  ]);
  assert.deepEqual((plain.outcome as { usage?: unknown }).usage, { ocrPages: 2 });

  const html = await json<OcrResponse>('ocr', {
    model: 'local-ocr',
    document: { type: 'document_url', document_url: dataUri('text/html', '<html><body><h1>Title</h1><p>Hello &amp; <b>bye</b></p><ul><li>one</li></ul></body></html>') },
  });
  assert.equal(html.body.pages[0].markdown, '# Title\n\nHello & **bye**\n\n- one');

  for (const compress of [false, true]) {
    const pdf = await json<OcrResponse>('ocr', {
      model: 'local-ocr',
      document: dataUri('application/pdf', simplePdf(['Hello (PDF) world', 'Second page\nwith two lines'], compress)),
    });
    assert.deepEqual(pdf.body.pages, [
      { index: 0, markdown: 'Hello (PDF) world' },
      { index: 1, markdown: 'Second page\nwith two lines' },
    ]);
  }

  const image = await json<OcrResponse>('ocr', { model: 'local-ocr', document: dataUri('image/png', 'xx') });
  assert.equal(image.body.pages.length, 1);
  assert.match(image.body.pages[0].markdown, /image\/png/);
});

test('ocr: URLs and non-data references are rejected with 400', async () => {
  for (const document of ['https://example.com/a.pdf', 'not a reference']) {
    await assert.rejects(
      provider.invoke(localTestInvocation('ocr', { model: 'local-ocr', document })),
      (error: unknown) => error instanceof GatewayError && error.status === 400 && error.param === 'document',
    );
  }
});
