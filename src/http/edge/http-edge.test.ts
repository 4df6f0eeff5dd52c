import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { EdgeAnswer } from './edge-answer.js';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { EDGE_REQUEST_START_CHANNEL, installHttpEdge, type HttpEdge } from './http-edge.js';
import type { ServedRequestHead } from './request-head.js';

const PATH = '/v1/chat/completions';
const BODY_LIMIT = 1024;

/**
 * A node:http server with the edge in front. The edge answers JSON calls on PATH by what their body
 * asks (`do`); node:http answers everything handed to it with `node <method> <url>`, so each answer
 * says who served it.
 */
describe("gw's HTTP edge", () => {
  let server: Server;
  let edge: HttpEdge;
  let port: number;
  let closing = false;
  const served: Array<{ request: ServedRequestHead; body: string }> = [];
  let lastAnswer: EdgeAnswer | undefined;

  before(async () => {
    server = createServer((request, response) => {
      let text = '';
      request.setEncoding('utf8');
      request.on('data', (chunk) => (text += chunk));
      request.on('end', () => {
        response.setHeader('content-type', 'text/plain');
        response.end(`node ${request.method} ${request.url} ${text}`);
      });
    });
    server.keepAliveTimeout = 5000;
    edge = installHttpEdge(server, {
      bodyLimitBytes: BODY_LIMIT,
      servesPath: (path) => path === PATH,
      isClosing: () => closing,
      serve(request, body, answer) {
        served.push({ request, body });
        lastAnswer = answer;
        const asked = JSON.parse(body) as { do?: string; n?: number };
        if (asked.do === 'stream') {
          answer.statusCode = 200;
          answer.setHeader('content-type', 'text/event-stream');
          answer.setHeader('trailer', 'x-cost');
          answer.write('data: 1\n\n');
          setTimeout(() => {
            answer.write(Buffer.from('data: ✓\n\n'));
            answer.addTrailers({ 'x-cost': '0.5' });
            answer.end();
          }, 5);
          return;
        }
        if (asked.do === 'hang') return; // answered never: the client goes away
        if (asked.do === 'bad-header') {
          // A header node:http would refuse throws before anything is sent; the error answer still goes out.
          answer.setHeader('x-bad', 'a\r\nb');
          assert.throws(() => answer.write('data: 1\n\n'), /Invalid character in header content/);
          answer.writeHead(500, { 'x-bad': 'fine', 'content-type': 'application/json', 'content-length': 2 });
          answer.end('{}');
          return;
        }
        if (asked.do === 'buffer') {
          answer.writeHead(201, { 'content-type': 'application/octet-stream', 'content-length': 3 });
          answer.end(Buffer.from('abc'));
          return;
        }
        answer.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        answer.end(body);
      },
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as { port: number }).port;
  });
  after(() => {
    closing = true;
    edge.closeIdleConnections();
    server.closeAllConnections();
    server.close();
  });
  beforeEach(() => {
    served.length = 0;
    closing = false;
  });

  /** Writes `bytes` (in pieces, when given several) and reads until `answers` complete HTTP answers arrived, or the connection closed. */
  async function exchange(pieces: Array<string | Buffer>, options: { socket?: Socket; untilClosed?: boolean; waitMs?: number } = {}): Promise<{ text: string; socket: Socket; closed: boolean }> {
    const socket = options.socket ?? connect(port, '127.0.0.1');
    if (!options.socket) await once(socket, 'connect');
    let text = '';
    let closed = false;
    const onData = (chunk: Buffer) => (text += chunk.toString('latin1'));
    socket.on('data', onData);
    const ended = new Promise<void>((resolve) => socket.once('close', () => ((closed = true), resolve())));
    for (const piece of pieces) {
      socket.write(piece);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    if (options.untilClosed) await ended;
    else await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, options.waitMs ?? 150))]);
    socket.off('data', onData);
    return { text, socket, closed };
  }

  const call = (body: string, extra = '') =>
    `POST ${PATH} HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

  test('answers a JSON call with Date and keep-alive headers, and keeps the connection for the next', async () => {
    const first = await exchange([call('{"n":1}')]);
    assert.match(first.text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(first.text, /\r\ncontent-length: 7\r\n/);
    assert.match(first.text, /\r\ndate: \w{3}, \d\d \w{3} \d{4} [\d:]{8} GMT\r\n/);
    assert.match(first.text, /\r\nconnection: keep-alive\r\nkeep-alive: timeout=5\r\n/);
    assert.ok(first.text.endsWith('\r\n\r\n{"n":1}'));
    const second = await exchange([call('{"n":2}')], { socket: first.socket });
    assert.ok(second.text.endsWith('{"n":2}'));
    assert.equal(served.length, 2);
    first.socket.destroy();
  });

  test('each call served is published on gw:http:request:start, with the moment its first byte was read', async () => {
    const started: Array<{ answer: EdgeAnswer; at: number }> = [];
    const onStart = (message: unknown) => started.push(message as { answer: EdgeAnswer; at: number });
    subscribe(EDGE_REQUEST_START_CHANNEL, onStart);
    try {
      const before = performance.now();
      const { socket } = await exchange([call('{"n":1}')]);
      socket.destroy();
      assert.equal(started.length, 1);
      assert.ok(started[0]!.at >= before && started[0]!.at <= performance.now());
      assert.equal(started[0]!.answer.writableFinished, true);
    } finally {
      unsubscribe(EDGE_REQUEST_START_CHANNEL, onStart);
    }
  });

  test('a request arriving a byte at a time, and pipelined requests in one write, are each answered in order', async () => {
    const bytes = Buffer.from(call('{"n":"é"}'));
    const slow = await exchange([...bytes].map((byte) => Buffer.from([byte])), { waitMs: 300 });
    assert.ok(slow.text.endsWith(Buffer.from('{"n":"é"}').toString('latin1')), slow.text);
    const pipelined = await exchange([call('{"n":1}') + call('{"n":2}') + call('{"n":3}')]);
    const bodies = pipelined.text.match(/\{"n":\d\}/g);
    assert.deepEqual(bodies, ['{"n":1}', '{"n":2}', '{"n":3}']);
    slow.socket.destroy();
    pipelined.socket.destroy();
  });

  test('a Buffer body goes with its own length; a stream is chunked with its trailers, read by node:http as such', async () => {
    const buffered = await exchange([call('{"do":"buffer"}')]);
    assert.match(buffered.text, /^HTTP\/1\.1 201 Created\r\n/);
    assert.ok(buffered.text.endsWith('\r\n\r\nabc'));
    buffered.socket.destroy();
    const streamed = await new Promise<{ text: string; trailers: Record<string, string | undefined>; headers: Record<string, unknown> }>((resolve, reject) => {
      const body = '{"do":"stream"}';
      const outgoing = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: PATH, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ text, trailers: response.trailers, headers: response.headers }));
      });
      outgoing.on('error', reject);
      outgoing.end(body);
    });
    assert.equal(streamed.text, 'data: 1\n\ndata: ✓\n\n');
    assert.equal(streamed.headers['transfer-encoding'], 'chunked');
    assert.equal(streamed.trailers['x-cost'], '0.5');
  });

  test('a header that cannot be written throws before anything is sent, and the answer can still be given', async () => {
    const { text, socket } = await exchange([call('{"do":"bad-header"}')]);
    assert.match(text, /^HTTP\/1\.1 500 Internal Server Error\r\nx-bad: fine\r\n/);
    assert.ok(text.endsWith('\r\ncontent-length: 2\r\n') === false && text.endsWith('\r\n\r\n{}'), text);
    assert.doesNotMatch(text, /transfer-encoding/);
    socket.destroy();
  });

  test('the first request the edge does not take hands the connection, and the bytes read, to node:http for good', async () => {
    const first = await exchange([call('{"n":1}')]);
    assert.ok(first.text.endsWith('{"n":1}'));
    // A GET, then a JSON call on the same connection: both node's now.
    const handed = await exchange([`GET /v1/models HTTP/1.1\r\nHost: gw\r\n\r\n${call('{"n":2}')}`], { socket: first.socket });
    assert.match(handed.text, /node GET \/v1\/models/);
    assert.match(handed.text, /node POST \/v1\/chat\/completions \{"n":2\}/);
    assert.equal(served.length, 1);
    first.socket.destroy();
  });

  test('what node:http answers or refuses stays its own: chunked bodies, HTTP/1.0, oversized heads, malformed requests', async () => {
    const chunked = await exchange([`POST ${PATH} HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{"n\r\n`, `4\r\n":1}\r\n0\r\n\r\n`]);
    assert.match(chunked.text, /node POST \/v1\/chat\/completions \{"n":1\}/);
    const old = await exchange([`POST ${PATH} HTTP/1.0\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`], { untilClosed: true });
    assert.match(old.text, /node POST/);
    const huge = await exchange([`POST ${PATH} HTTP/1.1\r\nHost: gw\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`], { untilClosed: true });
    assert.match(huge.text, /^HTTP\/1\.1 431 /);
    const smuggled = await exchange([`POST ${PATH} HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`], { untilClosed: true });
    assert.match(smuggled.text, /^HTTP\/1\.1 400 /);
    assert.equal(served.length, 0);
    for (const each of [chunked, old, huge, smuggled]) each.socket.destroy();
  });

  test('Connection: close closes the connection once the answer is written', async () => {
    const asked = await exchange([call('{"n":1}', 'Connection: close\r\n')], { untilClosed: true });
    assert.match(asked.text, /\r\nconnection: close\r\n/);
    assert.ok(asked.text.endsWith('{"n":1}'));
  });

  test('a client gone before its answer, or ending its half of the connection, abandons the call: its answer closes', async () => {
    for (const leave of ['destroy', 'end'] as const) {
      const { socket } = await exchange([call('{"do":"hang"}')], { waitMs: 50 });
      const answer = lastAnswer!;
      const closed = once(answer, 'close');
      if (leave === 'destroy') socket.destroy();
      else socket.end();
      await closed;
      assert.equal(answer.destroyed, true, leave);
      assert.equal(answer.writableFinished, false, leave);
      assert.equal(answer.write('late'), false, leave);
      socket.destroy();
    }
  });

  test('closeIdleConnections closes waiting connections; a connection answering closes after its answer', async () => {
    const idle = await exchange([call('{"n":1}')]);
    const busy = await exchange([call('{"do":"hang"}')], { waitMs: 50 });
    const answer = lastAnswer!;
    const idleClosed = once(idle.socket, 'close');
    closing = true;
    edge.closeIdleConnections();
    await idleClosed;
    assert.equal(busy.socket.destroyed, false);
    let text = '';
    busy.socket.on('data', (chunk) => (text += chunk));
    answer.writeHead(200, { 'content-length': 2 });
    answer.end('{}');
    await once(busy.socket, 'close');
    assert.match(text, /\r\nconnection: close\r\n/);
    // While closing, new requests go to node:http (where Fastify answers 503).
    const late = await exchange([call('{"n":3}')]);
    assert.match(late.text, /node POST/);
    late.socket.destroy();
  });

  test('timing rules: an idle connection closes after keepAliveTimeout, a stalled head gets a 408', async () => {
    server.keepAliveTimeout = 1000;
    server.headersTimeout = 1000;
    try {
      const idle = await exchange([call('{"n":1}')]);
      const stalled = await exchange([`POST ${PATH} HTTP/1.1\r\nHost: gw\r\n`], { waitMs: 10 });
      const [idleResult, stalledResult] = await Promise.all([exchange([], { socket: idle.socket, untilClosed: true }), exchange([], { socket: stalled.socket, untilClosed: true })]);
      assert.equal(idleResult.closed, true);
      assert.equal(idleResult.text, '');
      assert.match(stalledResult.text, /^HTTP\/1\.1 408 /);
      // With a 'clientError' listener (Fastify's, in the gateway) the listener answers, as node:http lets it.
      const codes: string[] = [];
      const onClientError = (error: Error & { code?: string }, socket: Socket) => {
        codes.push(String(error.code));
        socket.end('HTTP/1.1 408 Request Timeout\r\nx-answered-by: listener\r\ncontent-length: 0\r\n\r\n');
      };
      server.on('clientError', onClientError);
      try {
        const slowBody = await exchange([`POST ${PATH} HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{`], { waitMs: 10 });
        server.requestTimeout = 1000;
        const answered = await exchange([], { socket: slowBody.socket, untilClosed: true });
        assert.match(answered.text, /^HTTP\/1\.1 408 Request Timeout\r\nx-answered-by: listener\r\n/);
        assert.deepEqual(codes, ['ERR_HTTP_REQUEST_TIMEOUT']);
      } finally {
        server.off('clientError', onClientError);
      }
    } finally {
      server.keepAliveTimeout = 5000;
      server.headersTimeout = 60_000;
      server.requestTimeout = 300_000;
    }
  });
});
