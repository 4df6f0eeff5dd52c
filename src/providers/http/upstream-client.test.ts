import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.js';
import { createUpstreamClient, headersFromRaw, type SendOptions } from './upstream-client.js';

// The buffered and the streamed send against a real loopback server: split bodies, repeated
// headers, early hints, aborts at each point of the exchange, the transport failures mapped to the
// spec's statuses, chunks handed over as they come, and backpressure on a slow reader.

type Route = (request: IncomingMessage, response: ServerResponse) => void;
const routes: Record<string, Route> = {
  '/split': (_request, response) => {
    response.writeHead(200, [['Content-Type', 'application/json'], ['X-Seen', 'one'], ['X-Seen', 'two']]);
    response.write('{"parts":');
    setTimeout(() => response.end('["a","b"]}'), 5);
  },
  '/echo': (request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => response.writeHead(201, { 'content-type': 'text/plain' }).end(`${request.method} ${body}`));
  },
  '/early-hints': (_request, response) => {
    response.writeEarlyHints({ link: '</style.css>; rel=preload' });
    response.writeHead(200, { 'content-type': 'text/plain' }).end('after 103');
  },
  '/error': (_request, response) => {
    response.writeHead(429, { 'retry-after': '7', 'content-type': 'application/json' }).end('{"error":{"message":"slow down"}}');
  },
  '/hang-headers': () => {},
  '/step': (_request, response) => {
    // The second chunk is written only once the test has read the first.
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write('data: one\n\n');
    stepGate = () => response.end('data: two\n\n');
  },
  '/flood': (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/octet-stream' });
    const piece = Buffer.alloc(64 * 1024, 7);
    floodWritten = 0;
    const pump = () => {
      while (floodWritten < FLOOD_BYTES) {
        floodWritten += piece.length;
        if (!response.write(piece)) return void response.once('drain', pump);
      }
      response.end();
    };
    pump();
  },
  '/forever': (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const timer = setInterval(() => response.write('data: tick\n\n'), 5);
    response.on('close', () => {
      clearInterval(timer);
      foreverClosed?.();
    });
  },
  '/hang-body': (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.write('{"partial":');
  },
};

const FLOOD_BYTES = 32 * 1024 * 1024;
let floodWritten = 0;
let stepGate: (() => void) | undefined;
let foreverClosed: (() => void) | undefined;

let server: Server;
let base: string;
/** Connections the server has accepted so far. */
let connectionsAccepted = 0;

before(async () => {
  server = createServer((request, response) => routes[request.url ?? '']!(request, response));
  server.on('connection', () => connectionsAccepted++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function options(overrides: Partial<SendOptions> = {}): SendOptions {
  return { signal: new AbortController().signal, firstByteMs: 2000, idleMs: 2000, provider: 'acme', ...overrides };
}

// Both clients (gw's HTTP/1.1 client, the default, and undici, GW_UPSTREAM_CLIENT=undici) must
// behave alike, for answers read whole and for answers read as they arrive.
for (const upstreamClient of ['http1', 'undici'] as const) {
  describe(`upstream client: answers read whole (${upstreamClient})`, () => {
    const buffered = createUpstreamClient({ upstreamClient });
    after(() => buffered.close());

    test('a body written in several parts arrives whole, with its status and repeated headers', async () => {
      const response = await buffered.sendBuffered({ method: 'GET', url: `${base}/split`, headers: {} }, options());
      assert.equal(response.statusCode, 200);
      assert.deepEqual(JSON.parse(response.body.toString('utf8')), { parts: ['a', 'b'] });
      assert.equal(response.headers['content-type'], 'application/json');
      assert.deepEqual(response.headers['x-seen'], ['one', 'two']);
    });

    test('the request body and method reach the upstream', async () => {
      const response = await buffered.sendBuffered({ method: 'POST', url: `${base}/echo`, headers: { 'content-type': 'text/plain' }, body: 'hello' }, options());
      assert.equal(response.statusCode, 201);
      assert.equal(response.body.toString('utf8'), 'POST hello');
    });

    test('a 103 Early Hints before the answer is passed over', async () => {
      const response = await buffered.sendBuffered({ method: 'GET', url: `${base}/early-hints`, headers: {} }, options());
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers.link, undefined);
      assert.equal(response.body.toString('utf8'), 'after 103');
    });

    test('an error answer is returned as it came, for the adapter to classify', async () => {
      const response = await buffered.sendBuffered({ method: 'GET', url: `${base}/error`, headers: {} }, options());
      assert.equal(response.statusCode, 429);
      assert.equal(response.headers['retry-after'], '7');
      assert.match(response.body.toString('utf8'), /slow down/);
    });

    test('no headers within firstByteMs: upstream_timeout (504)', async () => {
      const error = await buffered.sendBuffered({ method: 'GET', url: `${base}/hang-headers`, headers: {} }, options({ firstByteMs: 100 })).catch((caught) => caught);
      assert.ok(error instanceof GatewayError);
      assert.equal(error.code, 'upstream_timeout');
      assert.equal(error.status, 504);
    });

    test('a body that stops mid-way for longer than idleMs: upstream_timeout (504)', async () => {
      const error = await buffered.sendBuffered({ method: 'GET', url: `${base}/hang-body`, headers: {} }, options({ idleMs: 100 })).catch((caught) => caught);
      assert.ok(error instanceof GatewayError);
      assert.equal(error.code, 'upstream_timeout');
    });

    test('a refused connection: upstream_unavailable (503)', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((resolve) => closed.close(resolve));
      const error = await buffered.sendBuffered({ method: 'GET', url: `http://127.0.0.1:${port}/`, headers: {} }, options()).catch((caught) => caught);
      assert.ok(error instanceof GatewayError);
      assert.equal(error.code, 'upstream_unavailable');
      assert.equal(error.status, 503);
    });

    test('aborting while waiting for headers, or mid-body, rejects with the abort reason', async () => {
      for (const path of ['/hang-headers', '/hang-body']) {
        const controller = new AbortController();
        const reason = new GatewayError('invalid_request', 'The client closed the connection.');
        const pending = buffered.sendBuffered({ method: 'GET', url: `${base}${path}`, headers: {} }, options({ signal: controller.signal }));
        setTimeout(() => controller.abort(reason), 50);
        await assert.rejects(pending, (error) => error === reason, path);
      }
    });

    test('a signal aborted before sending rejects at once and sends nothing', async () => {
      const controller = new AbortController();
      const reason = new GatewayError('invalid_request', 'The client closed the connection.');
      controller.abort(reason);
      let reached = false;
      routes['/never'] = () => (reached = true);
      await assert.rejects(buffered.sendBuffered({ method: 'GET', url: `${base}/never`, headers: {} }, options({ signal: controller.signal })), (error) => error === reason);
      assert.equal(reached, false);
    });
  });
}

for (const upstreamClient of ['http1', 'undici'] as const) {
describe(`upstream client: answers read as they arrive (${upstreamClient})`, () => {
  const client = createUpstreamClient({ upstreamClient });
  after(() => client.close());

  test('each chunk reaches the reader as it arrives, before the upstream has written the next', async () => {
    const response = await client.send({ method: 'GET', url: `${base}/step`, headers: {} }, options());
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'text/event-stream');
    const chunks: string[] = [];
    for await (const chunk of response.body) {
      chunks.push(chunk.toString('utf8'));
      if (chunks.length === 1) stepGate!();
    }
    assert.deepEqual(chunks, ['data: one\n\n', 'data: two\n\n']);
  });

  test('a reader that falls behind pauses the upstream, then gets every byte in order', async () => {
    const response = await client.send({ method: 'GET', url: `${base}/flood`, headers: {} }, options());
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Without backpressure the whole answer would sit in the gateway's memory by now.
    assert.ok(floodWritten < FLOOD_BYTES / 2, `the upstream was held back (${floodWritten} of ${FLOOD_BYTES} bytes written)`);
    let length = 0;
    for await (const chunk of response.body) {
      assert.ok(chunk.every((byte) => byte === 7));
      length += chunk.length;
    }
    assert.equal(length, FLOOD_BYTES);
  });

  test('a reader that leaves early ends the exchange', async () => {
    const closed = new Promise<void>((resolve) => (foreverClosed = resolve));
    const response = await client.send({ method: 'GET', url: `${base}/forever`, headers: {} }, options());
    let seen = 0;
    for await (const chunk of response.body) {
      seen += chunk.length;
      if (seen > 0) break;
    }
    assert.equal(response.body.destroyed, true);
    await closed;
  });

  test('readAll reads the rest whole, or only up to a limit and then ends the exchange', async () => {
    const whole = await client.send({ method: 'GET', url: `${base}/split`, headers: {} }, options());
    assert.deepEqual(JSON.parse((await whole.body.readAll()).toString('utf8')), { parts: ['a', 'b'] });
    const closed = new Promise<void>((resolve) => (foreverClosed = resolve));
    const endless = await client.send({ method: 'GET', url: `${base}/forever`, headers: {} }, options());
    const start = await endless.body.readAll(40);
    assert.equal(start.length, 40);
    assert.match(start.toString('utf8'), /^data: tick/);
    await closed;
  });

  test('an error answer comes back as an answer, its body readable', async () => {
    const response = await client.send({ method: 'GET', url: `${base}/error`, headers: {} }, options());
    assert.equal(response.statusCode, 429);
    assert.match((await response.body.readAll(1024)).toString('utf8'), /slow down/);
  });

  test('a body that stops mid-way for longer than idleMs fails the waiting read: upstream_timeout (504)', async () => {
    const response = await client.send({ method: 'GET', url: `${base}/hang-body`, headers: {} }, options({ idleMs: 100 }));
    const error = await (async () => {
      for await (const chunk of response.body) void chunk;
    })().catch((caught) => caught);
    assert.ok(error instanceof GatewayError);
    assert.equal(error.code, 'upstream_timeout');
  });

  test('aborting while waiting for headers, or mid-body, rejects with the abort reason', async () => {
    const reason = new GatewayError('invalid_request', 'The client closed the connection.');
    const early = new AbortController();
    const pending = client.send({ method: 'GET', url: `${base}/hang-headers`, headers: {} }, options({ signal: early.signal }));
    setTimeout(() => early.abort(reason), 50);
    await assert.rejects(pending, (error) => error === reason);

    const late = new AbortController();
    const response = await client.send({ method: 'GET', url: `${base}/hang-body`, headers: {} }, options({ signal: late.signal }));
    const reading = (async () => {
      for await (const chunk of response.body) void chunk;
    })();
    setTimeout(() => late.abort(reason), 50);
    await assert.rejects(reading, (error) => error === reason);
  });

  test('a reader held up longer than idleMs is not timed out: while the upstream is paused, its silence is ours', async () => {
    const response = await client.send({ method: 'GET', url: `${base}/flood`, headers: {} }, options({ idleMs: 100 }));
    await new Promise((resolve) => setTimeout(resolve, 400));
    let length = 0;
    for await (const chunk of response.body) length += chunk.length;
    assert.equal(length, FLOOD_BYTES);
  });

  test('a stream read to its end leaves its connection for the next call; one left early has its connection closed', async () => {
    const first = await client.send({ method: 'GET', url: `${base}/split`, headers: {} }, options());
    await first.body.readAll();
    const accepted = connectionsAccepted;
    const second = await client.send({ method: 'GET', url: `${base}/split`, headers: {} }, options());
    assert.deepEqual(JSON.parse((await second.body.readAll()).toString('utf8')), { parts: ['a', 'b'] });
    assert.equal(connectionsAccepted, accepted, 'the second call reused the connection');

    const closed = new Promise<void>((resolve) => (foreverClosed = resolve));
    const endless = await client.send({ method: 'GET', url: `${base}/forever`, headers: {} }, options());
    for await (const chunk of endless.body) if (chunk.length > 0) break;
    await closed;
    const after = await client.send({ method: 'GET', url: `${base}/split`, headers: {} }, options());
    assert.deepEqual(JSON.parse((await after.body.readAll()).toString('utf8')), { parts: ['a', 'b'] });
  });
});
}

test('headersFromRaw: lower-case names, repeated headers as arrays in order, no __proto__ key', () => {
  const headers = headersFromRaw([Buffer.from('Content-Type'), Buffer.from('text/plain'), Buffer.from('Set-Cookie'), Buffer.from('a=1'), Buffer.from('set-cookie'), Buffer.from('b=2'), Buffer.from('Set-Cookie'), Buffer.from('c=3'), Buffer.from('__proto__'), Buffer.from('x')]);
  assert.equal(headers['content-type'], 'text/plain');
  assert.deepEqual(headers['set-cookie'], ['a=1', 'b=2', 'c=3']);
  assert.equal(Object.getPrototypeOf(headers), Object.prototype);
  assert.equal(Object.hasOwn(headers, '__proto__'), false);
});
