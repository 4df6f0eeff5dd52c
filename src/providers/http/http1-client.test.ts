import assert from 'node:assert/strict';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createTestCertificates, type TestCertificates } from '../../../test/e2e/alerts-fixtures/test-certificates.js';
import { createHttp1Client, Http1TimeoutError, type Http1Client, type Http1StreamSink } from './http1-client.js';
import { createAnswerWaitPoller, type AnswerWaitPoller } from '../../lib/answer-wait-poller.js';
import type { SendOptions } from './upstream-client.js';

// What the HTTP/1.1 client does with connections: keep-alive reuse, the per-origin cap with a
// queue, servers that close idle connections, unsafe headers, TLS, answers cut short, timeouts,
// and the diagnostics channels. Answers' framing is covered by http1-response-reader.test.ts; the
// behaviour shared with undici by upstream-client.test.ts.

function options(overrides: Partial<SendOptions> = {}): SendOptions {
  return { signal: new AbortController().signal, firstByteMs: 2000, idleMs: 2000, provider: 'acme', ...overrides };
}

async function listen(server: Server | ReturnType<typeof createTcpServer>): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('http1 client against node:http', () => {
  const sockets = new Set<Socket>();
  let server: Server;
  let base: string;
  let client: Http1Client;
  let inFlight = 0;
  let mostInFlight = 0;
  let release: (() => void)[] = [];

  before(async () => {
    server = createHttpServer((request: IncomingMessage, response: ServerResponse) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        const answer = () => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ url: request.url, body, host: request.headers.host, length: request.headers['content-length'] }));
        if (request.url === '/held') {
          inFlight++;
          mostInFlight = Math.max(mostInFlight, inFlight);
          release.push(() => {
            inFlight--;
            answer();
          });
          return;
        }
        answer();
      });
    });
    server.keepAliveTimeout = 5000;
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    base = `http://127.0.0.1:${await listen(server)}`;
    client = createHttp1Client({ connectionsPerOrigin: 2, keepAliveTimeoutMs: 30_000, connectTimeoutMs: 2000 });
  });

  after(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  test('calls one after another share one keep-alive connection; host and length are set', async () => {
    let connections = 0;
    const count = () => connections++;
    server.on('connection', count);
    try {
      for (let index = 0; index < 5; index++) {
        const answer = await client.exchange({ method: 'POST', url: `${base}/n${index}`, headers: { 'content-type': 'application/json' }, body: `{"i":${index}}` }, options());
        assert.equal(answer.statusCode, 200);
        assert.deepEqual(JSON.parse(answer.body.toString()), { url: `/n${index}`, body: `{"i":${index}}`, host: base.slice('http://'.length), length: String(`{"i":${index}}`.length) });
      }
      assert.ok(connections <= 1, `${connections} new connections for 5 calls in a row`);
    } finally {
      server.off('connection', count);
    }
  });

  test('frozen headers are written once per path and method, and each call still gets its own body and length', async () => {
    const headers = Object.freeze({ 'content-type': 'application/json', authorization: 'Bearer one' });
    for (const [path, body] of [['/a', '{"n":1}'], ['/a', '{"n":22}'], ['/b', '{}']] as const) {
      const answer = await client.exchange({ method: 'POST', url: `${base}${path}`, headers, body }, options());
      assert.deepEqual(JSON.parse(answer.body.toString()), { url: path, body, host: base.slice('http://'.length), length: String(body.length) });
    }
    // An unfrozen object may change between calls, and is checked and written every time.
    const changing: Record<string, string> = { 'content-type': 'application/json' };
    await client.exchange({ method: 'POST', url: `${base}/c`, headers: changing, body: '{}' }, options());
    changing['bad header'] = 'x';
    await assert.rejects(client.exchange({ method: 'POST', url: `${base}/c`, headers: changing, body: '{}' }, options()), /invalid header/);
  });

  test('no more connections than allowed per origin: the rest wait their turn, and all are answered', async () => {
    mostInFlight = 0;
    release = [];
    const answers = Array.from({ length: 6 }, () => client.exchange({ method: 'POST', url: `${base}/held`, headers: {}, body: '{}' }, options()));
    while (release.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    // Let each held call go one at a time, so queued calls get a connection as one frees up.
    let answered = 0;
    while (answered < 6) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      const next = release.shift();
      if (next) {
        next();
        answered++;
      }
    }
    for (const answer of await Promise.all(answers)) assert.equal(answer.statusCode, 200);
    assert.equal(mostInFlight, 2);
    assert.ok(sockets.size <= 2, `${sockets.size} sockets open`);
  });

  test('a call waiting for a connection that is aborted leaves the queue and rejects with the reason', async () => {
    release = [];
    const held = [0, 1].map(() => client.exchange({ method: 'POST', url: `${base}/held`, headers: {}, body: '{}' }, options()));
    const controller = new AbortController();
    const queued = client.exchange({ method: 'POST', url: `${base}/n`, headers: {}, body: '{}' }, options({ signal: controller.signal }));
    const reason = new Error('client went away');
    controller.abort(reason);
    await assert.rejects(queued, (error) => error === reason);
    while (release.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    for (const next of release.splice(0)) next();
    for (const answer of await Promise.all(held)) assert.equal(answer.statusCode, 200);
  });

  test('a header value with CR or LF is refused before anything is sent', async () => {
    await assert.rejects(
      client.exchange({ method: 'POST', url: `${base}/n`, headers: { 'x-evil': 'a\r\nx-injected: 1' }, body: '{}' }, options()),
      /invalid header/,
    );
    await assert.rejects(client.exchange({ method: 'POST', url: `${base}/n`, headers: { 'bad name': 'x' }, body: '{}' }, options()), /invalid header/);
  });

  test('the gateway publishes the exchange on gw:upstream:* channels, in order', async () => {
    const seen: string[] = [];
    const names = ['request:create', 'client:sendHeaders', 'request:headers', 'request:bodyChunkReceived'];
    const listeners = names.map((name) => [`gw:upstream:${name}`, () => seen.push(name)] as const);
    for (const [channel, listener] of listeners) subscribe(channel, listener);
    try {
      await client.exchange({ method: 'POST', url: `${base}/n`, headers: {}, body: '{}' }, options());
    } finally {
      for (const [channel, listener] of listeners) unsubscribe(channel, listener);
    }
    assert.deepEqual(seen, names);
  });
});

describe('http1 client: servers that close, cut or stall', () => {
  test('a server that closes idle connections after its announced keep-alive: the next call opens a new one', async () => {
    const server = createHttpServer((_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
    server.keepAliveTimeout = 1200; // announced as timeout=1; the client keeps it for 1 s less, i.e. not at all
    let connections = 0;
    server.on('connection', () => connections++);
    const url = `http://127.0.0.1:${await listen(server)}/`;
    const client = createHttp1Client({ connectionsPerOrigin: 4, keepAliveTimeoutMs: 30_000, connectTimeoutMs: 2000 });
    try {
      assert.equal((await client.exchange({ method: 'GET', url, headers: {} }, options())).statusCode, 200);
      await new Promise((resolve) => setTimeout(resolve, 1400));
      assert.equal((await client.exchange({ method: 'GET', url, headers: {} }, options())).statusCode, 200);
      assert.equal(connections, 2);
    } finally {
      await client.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('raw servers: an answer cut mid-body fails; one closed without a length is whole; silence is a timeout', async () => {
    const behaviours: Record<string, (socket: Socket) => void> = {
      '/cut': (socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part'),
      '/to-the-end': (socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it'),
      '/silent': () => {},
      '/stalls': (socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nstart'),
      '/garbage': (socket) => socket.end('SMTP ready\r\n\r\n'),
    };
    const server = createTcpServer((socket) => {
      let head = '';
      socket.on('data', (chunk) => {
        head += chunk.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        const path = head.split(' ')[1]!;
        behaviours[path]!(socket);
      });
      socket.on('error', () => {});
    });
    const base = `http://127.0.0.1:${await listen(server)}`;
    const client = createHttp1Client({ connectionsPerOrigin: 4, keepAliveTimeoutMs: 30_000, connectTimeoutMs: 2000 });
    const send = (path: string, overrides: Partial<SendOptions> = {}) => client.exchange({ method: 'GET', url: base + path, headers: {} }, options(overrides));
    try {
      await assert.rejects(send('/cut'), (error: NodeJS.ErrnoException) => error.code === 'ECONNRESET');
      const whole = await send('/to-the-end');
      assert.equal(whole.body.toString(), 'all of it');
      await assert.rejects(send('/silent', { firstByteMs: 150 }), (error) => error instanceof Http1TimeoutError && error.phase === 'headers');
      await assert.rejects(send('/stalls', { idleMs: 150 }), (error) => error instanceof Http1TimeoutError && error.phase === 'body');
      // One length for both (as the gateway's calls have): the timer the head's read restarted goes on measuring the body's silence.
      await assert.rejects(send('/stalls', { firstByteMs: 150, idleMs: 150 }), (error) => error instanceof Http1TimeoutError && error.phase === 'body');
      await assert.rejects(send('/garbage'), /bad status line/);
    } finally {
      await client.close();
      server.close();
    }
  });
});

describe('http1 client: streamed answers', () => {
  /** A sink that writes down what it is told, and settles once the exchange is over. */
  function recordingSink() {
    const events: string[] = [];
    let ended!: () => void;
    const over = new Promise<void>((resolve) => (ended = resolve));
    const sink: Http1StreamSink = {
      onConnect: () => events.push('connect'),
      onResponseHead: (statusCode, headers) => events.push(`head ${statusCode} ${headers['content-type']}`),
      onData: (part) => (events.push(`data ${part.toString('latin1')}`), true),
      onComplete: () => (events.push('complete'), ended()),
      onError: (error) => (events.push(`error ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`), ended()),
    };
    return { sink, events, over };
  }

  test('head and first event in one packet, the rest as written; a complete stream leaves its connection for the next; one cut mid-body fails after its head', async () => {
    let connections = 0;
    const server = createTcpServer((socket) => {
      connections++;
      let pending = '';
      socket.on('data', (chunk) => {
        pending += chunk.toString('latin1');
        if (!pending.includes('\r\n\r\n')) return;
        const path = pending.split(' ')[1]!;
        pending = '';
        if (path === '/cut') return void socket.end('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n8\r\nsec');
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n');
        setTimeout(() => socket.write('6\r\nsecond\r\n0\r\n\r\n'), 20);
      });
      socket.on('error', () => {});
    });
    const base = `http://127.0.0.1:${await listen(server)}`;
    const client = createHttp1Client({ connectionsPerOrigin: 4, keepAliveTimeoutMs: 30_000, connectTimeoutMs: 2000 });
    try {
      for (let round = 0; round < 2; round++) {
        const { sink, events, over } = recordingSink();
        client.stream({ method: 'POST', url: `${base}/stream`, headers: {}, body: '{}' }, options(), sink);
        await over;
        assert.deepEqual(events, ['connect', 'head 200 text/event-stream', 'data first', 'data second', 'complete']);
      }
      assert.equal(connections, 1, 'the second stream went out on the first one\'s connection');
      const { sink, events, over } = recordingSink();
      client.stream({ method: 'POST', url: `${base}/cut`, headers: {}, body: '{}' }, options(), sink);
      await over;
      assert.deepEqual(events, ['connect', 'head 200 text/event-stream', 'data first', 'data sec', 'error ECONNRESET']);
    } finally {
      await client.close();
      server.close();
    }
  });

  test('a signal aborted before sending ends the stream at once, and nothing is sent', async () => {
    let connections = 0;
    const server = createTcpServer((socket) => {
      connections++;
      socket.on('error', () => {});
    });
    const base = `http://127.0.0.1:${await listen(server)}`;
    const client = createHttp1Client({ connectionsPerOrigin: 4, keepAliveTimeoutMs: 30_000, connectTimeoutMs: 2000 });
    try {
      const { sink, events, over } = recordingSink();
      // As upstream-client.ts's handler does: a signal already aborted ends the exchange from onConnect.
      sink.onConnect = (abort) => (events.push('connect'), abort(new Error('gone')));
      client.stream({ method: 'POST', url: `${base}/x`, headers: {}, body: '{}' }, options(), sink);
      await over;
      assert.deepEqual(events, ['connect', 'error gone']);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(connections, 0);
    } finally {
      await client.close();
      server.close();
    }
  });
});

describe('http1 client over TLS', () => {
  let certificates: TestCertificates;
  before(() => {
    certificates = createTestCertificates();
  });
  after(() => certificates.remove());

  test('https: the certificate is checked against the given CA; calls reuse the connection', async () => {
    const server = createHttpsServer({ key: certificates.key, cert: certificates.cert }, (request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' }).end(`tls ${request.method}`);
    });
    let connections = 0;
    server.on('secureConnection', () => connections++);
    const url = `https://localhost:${await listen(server as unknown as Server)}/`;
    const trusting = createHttp1Client({ connectionsPerOrigin: 4, keepAliveTimeoutMs: 30_000, connectTimeoutMs: 2000, connect: { ca: certificates.caPem } });
    const untrusting = createHttp1Client({ connectionsPerOrigin: 4, keepAliveTimeoutMs: 30_000, connectTimeoutMs: 2000 });
    try {
      for (let index = 0; index < 3; index++) {
        const answer = await trusting.exchange({ method: 'POST', url, headers: {}, body: 'x' }, options());
        assert.equal(answer.body.toString(), 'tls POST');
      }
      assert.equal(connections, 1);
      await assert.rejects(untrusting.exchange({ method: 'POST', url, headers: {}, body: 'x' }, options()), (error: NodeJS.ErrnoException) => /CERT|SELF_SIGNED|UNABLE/.test(String(error.code)));
    } finally {
      await trusting.close();
      await untrusting.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('a new connection to the same origin resumes the TLS session of the one before', async () => {
    // Connection: close makes every call open a new connection.
    const server = createHttpsServer({ key: certificates.key, cert: certificates.cert }, (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain', connection: 'close' }).end('ok');
    });
    const resumed: boolean[] = [];
    server.on('secureConnection', (socket) => socket.once('data', () => resumed.push(socket.isSessionReused())));
    const url = `https://localhost:${await listen(server as unknown as Server)}/`;
    const client = createHttp1Client({ connectionsPerOrigin: 4, keepAliveTimeoutMs: 30_000, connectTimeoutMs: 2000, connect: { ca: certificates.caPem } });
    try {
      for (let index = 0; index < 3; index++) {
        assert.equal((await client.exchange({ method: 'GET', url, headers: {} }, options())).body.toString(), 'ok');
        await new Promise((resolve) => setTimeout(resolve, 20)); // the session ticket arrives after the handshake
      }
      assert.deepEqual(resumed, [false, true, true]);
    } finally {
      await client.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('http1 client: polling for answers due at once', () => {
  /** A real poller, with every call to it counted. */
  function countingPoller(windowMs: number) {
    const inner = createAnswerWaitPoller({ windowMs });
    const counts = { sent: 0, polled: 0, settled: 0, typical: [] as Array<number | undefined> };
    const poller: AnswerWaitPoller = {
      sent(times, at) {
        counts.sent++;
        counts.typical.push(times.typicalMs);
        const polled = inner.sent(times, at);
        if (polled) counts.polled++;
        return polled;
      },
      settled() {
        counts.settled++;
        inner.settled();
      },
      get polling() {
        return inner.polling;
      },
    };
    return { poller, counts };
  }

  /** Keep-alive answers over raw TCP, by path: at once, after a delay, never, or cut short. */
  async function rawServer() {
    const server = createTcpServer((socket) => {
      let pending = '';
      socket.on('data', (chunk) => {
        pending += chunk.toString('latin1');
        let end: number;
        while ((end = pending.indexOf('\r\n\r\n')) >= 0) {
          const path = pending.slice(0, end).split(' ')[1]!;
          pending = pending.slice(end + 4);
          const ok = () => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
          if (path === '/fast') ok();
          else if (path === '/slow') setTimeout(ok, 40);
          else if (path === '/cut') socket.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart');
        }
      });
      socket.on('error', () => {});
    });
    return { server, base: `http://127.0.0.1:${await listen(server)}` };
  }

  test('an answer on a kept connection is polled for and timed; a timed-out or cut one stops the polling too', async () => {
    const { server, base } = await rawServer();
    const { poller, counts } = countingPoller(5);
    const client = createHttp1Client({ connectionsPerOrigin: 1, keepAliveTimeoutMs: 30_000, connectTimeoutMs: 2000, answerPoller: poller });
    const send = (path: string, overrides: Partial<SendOptions> = {}) => client.exchange({ method: 'GET', url: base + path, headers: {} }, options(overrides));
    try {
      assert.equal((await send('/fast')).body.toString(), 'ok');
      assert.equal(counts.sent, 0, 'the first request waits for its connection to open: not timed, not polled for');
      assert.equal((await send('/fast')).body.toString(), 'ok');
      assert.deepEqual(counts.typical, [undefined], 'the kept connection is timed; its origin had no answer times yet');
      assert.equal(counts.polled, 1);
      assert.equal(counts.settled, 1);
      await send('/fast');
      assert.equal(counts.typical.length, 2);
      assert.ok(counts.typical[1]! >= 0 && counts.typical[1]! < 1000, `typical answer time ${counts.typical[1]} ms`);
      await assert.rejects(send('/silent', { firstByteMs: 100 }), (error) => error instanceof Http1TimeoutError);
      assert.equal(counts.settled, counts.polled, 'a request that timed out settles its polling');
      await send('/fast'); // a new connection, after the timed-out one went
      await assert.rejects(send('/cut'), (error: NodeJS.ErrnoException) => error.code === 'ECONNRESET');
      assert.equal(counts.settled, counts.polled, 'an answer cut short settles its polling');
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(poller.polling, false, 'the loop sleeps again once nothing is due');
    } finally {
      await client.close();
      server.close();
    }
  });

  test('an origin that answers slower than the window is not polled for once it has been timed', async () => {
    const { server, base } = await rawServer();
    const { poller, counts } = countingPoller(5);
    const client = createHttp1Client({ connectionsPerOrigin: 1, keepAliveTimeoutMs: 30_000, connectTimeoutMs: 2000, answerPoller: poller });
    const send = () => client.exchange({ method: 'GET', url: `${base}/slow`, headers: {} }, options());
    try {
      for (let index = 0; index < 3; index++) assert.equal((await send()).body.toString(), 'ok');
      // The second request is polled for (nothing known yet) and timed at ~40 ms; the third is not polled for.
      assert.equal(counts.sent, 2);
      assert.equal(counts.polled, 1);
      assert.ok(counts.typical[1]! >= 30, `typical answer time ${counts.typical[1]} ms`);
      assert.equal(counts.settled, 1);
    } finally {
      await client.close();
      server.close();
    }
  });
});
