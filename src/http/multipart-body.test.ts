import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toOpenAIErrorBody } from '../errors/gateway-error.js';
import { buildServer } from './build-server.js';
import { readMultipartBody } from './multipart-body.js';

const FILE_LIMIT = 4096;

async function uploadServer() {
  const app = await buildServer({ bodyLimitBytes: 1 << 20, fileLimitBytes: FILE_LIMIT, logLevel: 'silent', version: 'test' });
  // Only a route that declares it consumes multipart/form-data is given the body (build-server.ts).
  app.post('/upload', { schema: { consumes: ['multipart/form-data'] } }, async (request) => {
    const { fields, files } = await readMultipartBody(request, ['image', 'file', 'f0', 'f1', 'f2', 'f3', 'f4']);
    return {
      fields,
      files: Object.fromEntries(Object.entries(files).map(([name, file]) => [name, { size: file.bytes.length, filename: file.filename, type: file.contentType }])),
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

test('multipart: a second file of one name, or a file the endpoint does not read, is a 400 naming it, not dropped unread', async () => {
  const { app, url } = await uploadServer();
  try {
    const image = () => new Blob([new Uint8Array(10)], { type: 'image/png' });
    const cases: Array<[FormData, string, RegExp]> = [
      [form([['image[]', image(), 'a.png'], ['image[]', image(), 'b.png']]), 'image', /Only one 'image' file/],
      [form([['image', image(), 'a.png'], ['thumbnail', image(), 't.png']]), 'thumbnail', /takes no 'thumbnail' file/],
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
    const cases: FormData[] = [
      form([['file', new Blob([new Uint8Array(FILE_LIMIT + 1)]), 'big.wav']]),
      form(Array.from({ length: 5 }, (_, index) => [`f${index}`, new Blob([new Uint8Array(1)]), `${index}.bin`] as [string, Blob, string])),
      form(Array.from({ length: 33 }, (_, index) => [`field${index}`, 'x'] as [string, string])),
    ];
    for (const body of cases) {
      const response = await fetch(url, { method: 'POST', body });
      assert.equal(response.status, 413);
      const answer = (await response.json()) as ReturnType<typeof toOpenAIErrorBody>;
      assert.equal(answer.error.code, 'payload_too_large');
      assert.match(answer.error.message, /GW_FILE_LIMIT_BYTES/);
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
