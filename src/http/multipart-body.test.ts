import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { toOpenAIErrorBody } from '../errors/gateway-error.js';
import { buildServer } from './build-server.js';
import { readMultipartBody } from './multipart-body.js';
import type { UploadedFile } from '../pipeline/stage.js';

const FILE_LIMIT = 4096;

async function uploadServer() {
  const app = await buildServer({ bodyLimitBytes: 1 << 20, fileLimitBytes: FILE_LIMIT, logLevel: 'silent', version: 'test' });
  // Only a route that declares it consumes multipart/form-data is given the body (build-server.ts).
  app.post('/upload', { schema: { consumes: ['multipart/form-data'] } }, async (request) => {
    const { fields, files } = await readMultipartBody(request, ['image', 'file', ...Array.from({ length: 18 }, (_, index) => `f${index}`)], { repeatable: ['image'] });
    const described = (file: UploadedFile) => ({ size: file.bytes.length, filename: file.filename, type: file.contentType });
    return {
      fields,
      files: Object.fromEntries(
        Object.entries(files).map(([name, file]) => [name, file.more ? [file, ...file.more].map(described) : described(file)]),
      ),
    };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address() as { port: number };
  return { app, url: `http://127.0.0.1:${address.port}/upload` };
}

function form(entries: Array<[string, string | Blob, string?]>): FormData {
  const data = new FormData();
  for (const [name, value, filename] of entries) {
    if (typeof value === 'string') data.append(name, value);
    else data.append(name, value, filename);
  }
  return data;
}

test('multipart: fields and files are read whole; `name[]` is read as `name`', async () => {
  const { app, url } = await uploadServer();
  try {
    const body = form([
      ['model', 'local-image'],
      ['prompt', 'a cat'],
      ['image[]', new Blob([new Uint8Array(1000)], { type: 'image/png' }), 'a.png'],
    ]);
    const response = await fetch(url, { method: 'POST', body });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), {
      fields: { model: 'local-image', prompt: 'a cat' },
      files: { image: { size: 1000, filename: 'a.png', type: 'image/png' } },
    });
  } finally {
    await app.close();
  }
});

test('multipart: a repeatable file name keeps every file in the order sent, `image` and `image[]` alike', async () => {
  const { app, url } = await uploadServer();
  try {
    const image = (size: number) => new Blob([new Uint8Array(size)], { type: 'image/png' });
    const body = form([
      ['image[]', image(1), 'a.png'],
      ['prompt', 'several'],
      ['image[]', image(2), 'b.png'],
      ['image', image(3), 'c.png'],
    ]);
    const response = await fetch(url, { method: 'POST', body });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), {
      fields: { prompt: 'several' },
      files: {
        image: [
          { size: 1, filename: 'a.png', type: 'image/png' },
          { size: 2, filename: 'b.png', type: 'image/png' },
          { size: 3, filename: 'c.png', type: 'image/png' },
        ],
      },
    });
  } finally {
    await app.close();
  }
});

test('multipart: a second file of one name, or a file the endpoint does not read, is a 400 naming it, not dropped unread', async () => {
  const { app, url } = await uploadServer();
  try {
    const file = () => new Blob([new Uint8Array(10)], { type: 'audio/wav' });
    const cases: Array<[FormData, string, RegExp]> = [
      [form([['file', file(), 'a.wav'], ['file', file(), 'b.wav']]), 'file', /Only one 'file' file/],
      [form([['image', file(), 'a.png'], ['thumbnail', file(), 't.png']]), 'thumbnail', /takes no 'thumbnail' file/],
    ];
    for (const [body, param, message] of cases) {
      const response = await fetch(url, { method: 'POST', body });
      assert.equal(response.status, 400);
      const answer = (await response.json()) as { error: { message: string; param: string } };
      assert.equal(answer.error.param, param);
      assert.match(answer.error.message, message);
    }
    assert.equal((await fetch(url, { method: 'POST', body: form([['model', 'm']]) })).status, 200, 'the connection still answers');
  } finally {
    await app.close();
  }
});

test('multipart: a file past the limit, too many files or too many fields is 413 with the error body; the connection still answers', async () => {
  const { app, url } = await uploadServer();
  try {
    const cases: Array<[FormData, RegExp]> = [
      [form([['file', new Blob([new Uint8Array(FILE_LIMIT + 1)]), 'big.wav']]), /GW_FILE_LIMIT_BYTES/],
      [form(Array.from({ length: 18 }, (_, index) => [`f${index}`, new Blob([new Uint8Array(1)]), `${index}.bin`] as [string, Blob, string])), /at most 17 files/],
      [form(Array.from({ length: 18 }, (_, index) => ['image', new Blob([new Uint8Array(1)]), `${index}.png`] as [string, Blob, string])), /at most 17 files/],
      [form(Array.from({ length: 5 }, (_, index) => ['image', new Blob([new Uint8Array(FILE_LIMIT)]), `${index}.png`] as [string, Blob, string])), /at most \d+ bytes together/],
      [form(Array.from({ length: 33 }, (_, index) => [`field${index}`, 'x'] as [string, string])), /at most 32 text fields/],
    ];
    for (const [body, message] of cases) {
      const response = await fetch(url, { method: 'POST', body });
      assert.equal(response.status, 413);
      const answer = (await response.json()) as ReturnType<typeof toOpenAIErrorBody>;
      assert.equal(answer.error.code, 'payload_too_large');
      assert.match(answer.error.message, message);
    }
    const after = await fetch(url, { method: 'POST', body: form([['model', 'm']]) });
    assert.equal(after.status, 200);
  } finally {
    await app.close();
  }
});

test('multipart: a JSON body on an upload route, a body without a boundary, and a malformed body are 400', async () => {
  const { app, url } = await uploadServer();
  try {
    const json = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"m"}' });
    assert.equal(json.status, 400);
    assert.match(((await json.json()) as { error: { message: string } }).error.message, /multipart\/form-data/);

    const noBoundary = await fetch(url, { method: 'POST', headers: { 'content-type': 'multipart/form-data' }, body: 'x' });
    assert.equal(noBoundary.status, 400);
    assert.equal(((await noBoundary.json()) as { error: { code: string } }).error.code, 'invalid_request');

    const truncated = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=XYZ' },
      body: '--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\nabc',
    });
    assert.equal(truncated.status, 400);
    assert.equal(((await truncated.json()) as { error: { code: string } }).error.code, 'invalid_request');
  } finally {
    await app.close();
  }
});

test('multipart: a route that does not declare it consumes multipart/form-data answers it as any unsupported Content-Type', async () => {
  const app = await buildServer({ bodyLimitBytes: 1 << 20, fileLimitBytes: FILE_LIMIT, logLevel: 'silent', version: 'test' });
  app.post('/json-only', async (request) => ({ body: request.body ?? null }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/json-only`;
  try {
    const multipart = await fetch(url, { method: 'POST', body: form([['model', 'm'], ['file', new Blob(['x']), 'x.txt']]) });
    const plain = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    const multipartAnswer = (await multipart.json()) as ReturnType<typeof toOpenAIErrorBody>;
    assert.equal(multipart.status, plain.status);
    assert.deepEqual(multipartAnswer, await plain.json());
    assert.match(multipartAnswer.error.message, /Unsupported Content-Type/);
    // The connection still answers the next request.
    assert.equal((await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' })).status, 200);
  } finally {
    await app.close();
  }
});

test('multipart: a file the endpoint does not read is refused while it is still being sent, not buffered first', async () => {
  const { app, url } = await uploadServer();
  try {
    const boundary = 'gwtestboundary';
    const upload = httpRequest(url, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
    const answered = new Promise<IncomingMessage>((resolve, reject) => {
      upload.on('response', resolve);
      upload.on('error', reject);
    });
    upload.write(`--${boundary}\r\nContent-Disposition: form-data; name="thumbnail"; filename="t.png"\r\nContent-Type: image/png\r\n\r\n`);
    // Far past the file limit in all, sent in pieces; the answer comes after the first, with the upload still open.
    const piece = Buffer.alloc(FILE_LIMIT);
    upload.write(piece);
    const response = await answered;
    assert.equal(response.statusCode, 400);
    for (let index = 0; index < 16; index++) upload.write(piece);
    upload.end(`\r\n--${boundary}--\r\n`);
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { error: { param: string; code: string } };
    assert.deepEqual([answer.error.code, answer.error.param], ['invalid_request', 'thumbnail'], 'refused for its name, never counted against the size limit');
    assert.equal((await fetch(url, { method: 'POST', body: form([['model', 'm']]) })).status, 200, 'the server still answers');
  } finally {
    await app.close();
  }
});
