import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Http1ResponseReader, MalformedResponseError } from './http1-response-reader.js';

// Responses as an upstream sends them, fed whole, byte by byte and at every split point: each
// must give the same status, headers, body and reuse verdict however the bytes arrive.

interface Expected {
  statusCode: number;
  headers?: Record<string, string | string[] | undefined>;
  body: string;
  reusable: boolean;
  /** The response is complete only once the connection ends. */
  needsEnd?: boolean;
}

function feed(reader: Http1ResponseReader, pieces: Buffer[]): boolean {
  let complete = false;
  for (const piece of pieces) complete = reader.push(piece);
  return complete;
}

function splits(bytes: Buffer): Buffer[][] {
  const ways: Buffer[][] = [[bytes], [...bytes].map((byte) => Buffer.from([byte]))];
  for (let at = 1; at < bytes.length; at++) ways.push([bytes.subarray(0, at), bytes.subarray(at)]);
  return ways;
}

function check(name: string, raw: string, expected: Expected, method = 'POST'): void {
  test(name, () => {
    for (const pieces of splits(Buffer.from(raw, 'latin1'))) {
      const reader = new Http1ResponseReader(method);
      const complete = feed(reader, pieces);
      assert.equal(complete, !expected.needsEnd, `complete after ${pieces.length} pieces`);
      if (expected.needsEnd) assert.equal(reader.end(), true);
      assert.equal(reader.statusCode, expected.statusCode);
      for (const [header, value] of Object.entries(expected.headers ?? {})) assert.deepEqual(reader.headers[header], value, header);
      assert.equal(reader.body().toString('latin1'), expected.body);
      assert.equal(reader.reusable, expected.reusable);
    }
  });
}

check(
  'content-length: the body is exactly that long; repeated headers become an array in order',
  'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Seen: one\r\nx-seen: two\r\nContent-Length: 11\r\n\r\n{"ok":true}',
  { statusCode: 200, headers: { 'content-type': 'application/json', 'x-seen': ['one', 'two'] }, body: '{"ok":true}', reusable: true },
);

check(
  'chunked, with a chunk extension and trailers: the chunks joined, the framing gone',
  'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\nhello\r\nA\r\n, world!!!\r\n0\r\nX-Trailer: yes\r\n\r\n',
  { statusCode: 200, body: 'hello, world!!!', reusable: true },
);

check(
  '1xx answers before the real one are passed over (103 with headers, then 100)',
  'HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok',
  { statusCode: 201, headers: { link: undefined }, body: 'ok', reusable: true },
);

check('204 has no body even with a length', 'HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n', { statusCode: 204, body: '', reusable: true });
check('a HEAD answer has no body', 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n', { statusCode: 200, body: '', reusable: true }, 'HEAD');
check('content-length 0', 'HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Length: 0\r\n\r\n', { statusCode: 429, headers: { 'retry-after': '7' }, body: '', reusable: true });

check(
  'no length and no chunking: the body runs to the end of the connection, which is not reused',
  'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end',
  { statusCode: 200, body: 'until the end', reusable: false, needsEnd: true },
);

check('Connection: close is honoured', 'HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 2\r\n\r\nok', { statusCode: 200, body: 'ok', reusable: false });
check('a status line without a reason phrase', 'HTTP/1.1 404\r\nContent-Length: 2\r\n\r\nno', { statusCode: 404, body: 'no', reusable: true });
check('a reason phrase of several words, any characters but line breaks', 'HTTP/1.1 503 Service Unavailable (try \tlater)\r\nContent-Length: 2\r\n\r\nno', { statusCode: 503, body: 'no', reusable: true });
check('an empty reason phrase after the space', 'HTTP/1.1 200 \r\nContent-Length: 2\r\n\r\nok', { statusCode: 200, body: 'ok', reusable: true });
check('an HTTP/1.0 answer is not reused', 'HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok', { statusCode: 200, body: 'ok', reusable: false });
check(
  'Transfer-Encoding and Content-Length together: chunked wins, the connection is not trusted again',
  'HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n',
  { statusCode: 200, body: 'ok', reusable: false },
);
check('the same length twice is one length', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok', { statusCode: 200, body: 'ok', reusable: true });

test('bytes after the end of the answer: complete, but the connection is not reused', () => {
  const reader = new Http1ResponseReader('POST');
  assert.equal(reader.push(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n')), true);
  assert.equal(reader.body().toString(), 'ok');
  assert.equal(reader.reusable, false);
});

test('Keep-Alive: timeout=N is read as a hint in ms', () => {
  const reader = new Http1ResponseReader('POST');
  reader.push(Buffer.from('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=100\r\nContent-Length: 0\r\n\r\n'));
  assert.equal(reader.keepAliveHintMs, 5000);
});

test('a connection that ends before a framed body is complete is not a complete answer', () => {
  const reader = new Http1ResponseReader('POST');
  assert.equal(reader.push(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort')), false);
  assert.equal(reader.end(), false);
  const chunked = new Http1ResponseReader('POST');
  assert.equal(chunked.push(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel')), false);
  assert.equal(chunked.end(), false);
});

const malformed: Record<string, string> = {
  'a status line that is not HTTP/1.x': 'HTTP/2 200\r\n\r\n',
  'a status code that is not three digits': 'HTTP/1.1 20 OK\r\n\r\n',
  'a status code of four digits': 'HTTP/1.1 2000 OK\r\n\r\n',
  'a status code with a letter': 'HTTP/1.1 2x0 OK\r\n\r\n',
  'HTTP/1.2': 'HTTP/1.2 200 OK\r\n\r\n',
  'two spaces before the status code': 'HTTP/1.1  200 OK\r\n\r\n',
  'a lower-case protocol name': 'http/1.1 200 OK\r\n\r\n',
  'a bare line feed in the reason phrase': 'HTTP/1.1 200 O\nK\r\nContent-Length: 0\r\n\r\n',
  'a bare carriage return in the reason phrase': 'HTTP/1.1 200 O\rK\r\nContent-Length: 0\r\n\r\n',
  'a status line alone, cut short': 'HTTP/1.1\r\n\r\n',
  'a header line without a colon': 'HTTP/1.1 200 OK\r\nBroken\r\n\r\n',
  'obsolete line folding': 'HTTP/1.1 200 OK\r\nX-A: one\r\n two\r\nContent-Length: 0\r\n\r\n',
  'a header name with a space': 'HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n',
  'two different lengths': 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok',
  'a length that is not a number': 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n',
  'a chunk size that is not hex': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
  'chunk data longer than its size': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokay\r\n0\r\n\r\n',
  '101 Switching Protocols, never asked for': 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n',
  'a __proto__ header': 'HTTP/1.1 200 OK\r\n__proto__: x\r\nContent-Length: 0\r\n\r\n',
};
for (const [name, raw] of Object.entries(malformed)) {
  test(`malformed: ${name}`, () => {
    const reader = new Http1ResponseReader('POST');
    assert.throws(() => reader.push(Buffer.from(raw, 'latin1')), MalformedResponseError);
  });
}

test('a head larger than 64 KiB is refused, whether it arrives whole or in pieces', () => {
  const big = `HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(70 * 1024)}\r\n`;
  assert.throws(() => new Http1ResponseReader('POST').push(Buffer.from(big)), MalformedResponseError);
  const reader = new Http1ResponseReader('POST');
  assert.throws(() => {
    for (let offset = 0; offset < big.length; offset += 4096) reader.push(Buffer.from(big.slice(offset, offset + 4096)));
  }, MalformedResponseError);
});

test('a listener is told the final head once (no 1xx), then the body de-chunked part by part, at every split point', () => {
  const raw = Buffer.from('HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\ndata: \r\n4;x=y\r\none\n\r\n0\r\n\r\n', 'latin1');
  for (const pieces of splits(raw)) {
    const events: string[] = [];
    let reader: Http1ResponseReader | undefined;
    reader = new Http1ResponseReader('POST', {
      onHead: () => events.push(`head ${reader!.statusCode} ${reader!.headers['transfer-encoding']}`),
      onBodyPart: (part) => events.push(`part ${part.toString('latin1')}`),
    });
    assert.equal(feed(reader, pieces), true);
    assert.equal(events[0], 'head 200 chunked');
    assert.equal(events.filter((event) => event.startsWith('head')).length, 1);
    assert.equal(events.slice(1).map((event) => event.slice(5)).join(''), 'data: one\n');
    assert.equal(reader.bodyBytes, 10);
    assert.equal(reader.body().length, 0, 'a listener takes the parts: none are kept');
  }
});

test('a listener hears of a bodiless answer (204) as complete already, and of no part', () => {
  const events: string[] = [];
  const reader: Http1ResponseReader = new Http1ResponseReader('POST', {
    onHead: () => events.push(`head complete=${reader.complete}`),
    onBodyPart: () => events.push('part'),
  });
  assert.equal(reader.push(Buffer.from('HTTP/1.1 204 No Content\r\n\r\n')), true);
  assert.deepEqual(events, ['head complete=true']);
});
