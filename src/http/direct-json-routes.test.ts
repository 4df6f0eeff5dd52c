import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
import { buildServer } from './build-server.js';
import { serveJsonRoutesDirectly } from './direct-json-routes.js';
import { isJsonContentType } from './edge/request-head.js';
import type { InferenceHandler } from './inference-handler.js';

const BODY_LIMIT = 4096;

/**
 * One handler behind both ways in: the direct listener (real HTTP) and Fastify (app.inject, which
 * never passes the server's listener). Its answer depends on the body's `do` field.
 */
const handler: InferenceHandler = async (request, reply) => {
  const body = request.body as Record<string, unknown> | undefined;
  switch (body?.do) {
    case 'raw':
      reply.header('x-gw-route', 'deployment#0');
      reply.header('content-type', 'application/json');
      reply.send(Buffer.from('{"raw":true}'));
      return;
    case 'refuse':
      reply.headers({ 'x-ratelimit-limit-requests': '10' });
      throw new GatewayError('rate_limit_exceeded', 'Too many requests.', { headers: { 'retry-after': '7' } });
    case 'crash':
      throw new Error('a bug');
    case 'stream':
      reply.hijack();
      reply.raw.writeHead(200, { 'content-type': 'text/event-stream', 'x-gw-request-id': request.id });
      reply.raw.write('data: {"n":1}\n\n');
      reply.raw.end('data: [DONE]\n\n');
      return;
    default:
      reply.send({ id: request.id, body: body ?? null, polluted: ({} as Record<string, unknown>).polluted ?? null, keys: body ? Object.keys(body) : [] });
  }
};

// Both ways the gateway can read its connections (GW_HTTP_EDGE): gw's HTTP edge, and node:http.
for (const edge of [true, false]) describe(`direct JSON routes (${edge ? "gw's HTTP edge" : 'node:http'})`, () => {
  let app: FastifyInstance;
  let port: number;
  let closing = false;
  let frameworkRequests = 0;

  before(async () => {
    app = await buildServer({ bodyLimitBytes: BODY_LIMIT, fileLimitBytes: BODY_LIMIT, logLevel: 'silent', version: 'test' });
    app.addHook('onRequest', (_request, _reply, done) => {
      frameworkRequests++;
      done();
    });
    app.post('/v1/chat/completions', handler);
    serveJsonRoutesDirectly(app.server, { handlers: new Map([['/v1/chat/completions', handler]]), bodyLimitBytes: BODY_LIMIT, logger: app.log, isClosing: () => closing, edge });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as { port: number }).port;
  });
  after(() => app.close());

  interface Answer {
    status: number;
    headers: Record<string, string | string[] | undefined>;
    text: string;
    viaFramework: boolean;
  }

  /** A real HTTP request; `chunked` sends the body without a Content-Length. */
  function send(options: { path?: string; contentType?: string; body?: string; chunked?: boolean }): Promise<Answer> {
    const before = frameworkRequests;
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = {};
      if (options.contentType) headers['content-type'] = options.contentType;
      if (options.body !== undefined && !options.chunked) headers['content-length'] = String(Buffer.byteLength(options.body));
      const outgoing = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: options.path ?? '/v1/chat/completions', headers }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, text, viaFramework: frameworkRequests > before }));
      });
      outgoing.on('error', reject);
      if (options.chunked && options.body !== undefined) {
        // Two writes without a length: Transfer-Encoding: chunked.
        outgoing.write(options.body.slice(0, 10));
        outgoing.end(options.body.slice(10));
      } else {
        outgoing.end(options.body);
      }
    });
  }

  /** The same request through Fastify (inject), for answers that must match the direct path's. */
  async function throughFramework(body: string, contentType = 'application/json') {
    const response = await app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { 'content-type': contentType }, payload: body });
    return { status: response.statusCode, headers: response.headers, json: response.json() as Record<string, any> };
  }

  const without = (value: Record<string, any>, ...names: string[]) => Object.fromEntries(Object.entries(value).filter(([name]) => !names.includes(name)));

  test('a JSON call is served without Fastify, with the request id and latency headers Fastify would add', async () => {
    const answer = await send({ contentType: 'application/json', body: JSON.stringify({ model: 'm', n: 1 }) });
    assert.equal(answer.status, 200);
    assert.equal(answer.viaFramework, false);
    const json = JSON.parse(answer.text);
    assert.deepEqual(json.body, { model: 'm', n: 1 });
    assert.match(String(answer.headers['x-gw-request-id']), /^req_/);
    assert.equal(json.id, answer.headers['x-gw-request-id']);
    assert.match(String(answer.headers['x-gw-latency-ms']), /^\d+\.\d\d$/);
    assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
    const framework = await throughFramework(JSON.stringify({ model: 'm', n: 1 }));
    assert.deepEqual(without(json, 'id'), without(framework.json, 'id'));
    assert.equal(framework.headers['content-type'], answer.headers['content-type']);
  });

  test('parameters on the content type are accepted; other types, query strings and a closing server go to Fastify', async () => {
    const charset = await send({ contentType: 'Application/JSON; charset=utf-8', body: '{"a":1}' });
    assert.equal(charset.status, 200);
    assert.equal(charset.viaFramework, false);
    const plain = await send({ contentType: 'text/plain', body: 'hi' });
    assert.equal(plain.status, 400);
    assert.equal(plain.viaFramework, true);
    assert.equal(JSON.parse(plain.text).error.code, 'invalid_request');
    const query = await send({ path: '/v1/chat/completions?x=1', contentType: 'application/json', body: '{"a":1}' });
    assert.equal(query.status, 200);
    assert.equal(query.viaFramework, true);
    closing = true;
    try {
      // Fastify itself is not closing here, so it answers; in a gateway that shuts down it refuses with a 503.
      const delegated = await send({ contentType: 'application/json', body: '{"a":1}' });
      assert.equal(delegated.viaFramework, true);
    } finally {
      closing = false;
    }
    assert.equal(isJsonContentType(undefined), false);
    assert.equal(isJsonContentType('application/jsonx'), false);
    assert.equal(isJsonContentType(' application/json ;charset=utf-8'), true);
  });

  test('a raw Buffer answer keeps its content type and the handler headers', async () => {
    const answer = await send({ contentType: 'application/json', body: '{"do":"raw"}' });
    assert.equal(answer.status, 200);
    assert.equal(answer.text, '{"raw":true}');
    assert.equal(answer.headers['content-type'], 'application/json');
    assert.equal(answer.headers['x-gw-route'], 'deployment#0');
    assert.equal(answer.headers['content-length'], '12');
  });

  test('errors: the same status, body and headers as through Fastify', async () => {
    for (const body of ['{"do":"refuse"}', '{"do":"crash"}', '{"model":', '']) {
      const direct = await send({ contentType: 'application/json', body });
      const framework = await throughFramework(body);
      assert.equal(direct.viaFramework, false, body);
      assert.equal(direct.status, framework.status, body);
      assert.deepEqual(JSON.parse(direct.text), framework.json, body);
      for (const name of ['retry-after', 'x-ratelimit-limit-requests', 'content-type']) assert.equal(direct.headers[name], framework.headers[name], `${body} ${name}`);
      assert.ok(direct.headers['x-gw-request-id'] && direct.headers['x-gw-latency-ms'], body);
    }
    const refused = await send({ contentType: 'application/json', body: '{"do":"refuse"}' });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '7');
    const empty = await send({ contentType: 'application/json', body: '' });
    assert.match(JSON.parse(empty.text).error.message, /empty/);
  });

  test('a request with no body reaches the handler with none (as in Fastify); __proto__ keys are dropped', async () => {
    // Neither Content-Length nor Transfer-Encoding (Node's client would send a chunked empty body).
    const raw = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = connect(port, '127.0.0.1', () => {
        socket.end('POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n');
      });
      socket.setEncoding('utf8');
      socket.on('data', (chunk) => (text += chunk));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(raw, /^HTTP\/1\.1 200 /);
    assert.equal(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)).body, null);
    const emptyChunked = await send({ contentType: 'application/json', body: '', chunked: true });
    assert.equal(emptyChunked.status, 400);
    const polluting = await send({ contentType: 'application/json', body: '{"__proto__":{"polluted":"yes"},"a":1}' });
    const json = JSON.parse(polluting.text);
    assert.equal(json.polluted, null);
    assert.deepEqual(json.keys, ['a']);
  });

  test('a body over the limit is a 413 that closes the connection, declared or chunked; one at the limit is read', async () => {
    const oversized = JSON.stringify({ text: 'x'.repeat(BODY_LIMIT) });
    for (const chunked of [false, true]) {
      const answer = await send({ contentType: 'application/json', body: oversized, chunked });
      assert.equal(answer.status, 413, `chunked=${chunked}`);
      assert.equal(JSON.parse(answer.text).error.code, 'payload_too_large');
      assert.equal(answer.headers.connection, 'close');
      assert.equal(answer.viaFramework, false);
    }
    const atLimit = JSON.stringify({ text: 'x'.repeat(BODY_LIMIT - 11) });
    assert.equal(Buffer.byteLength(atLimit), BODY_LIMIT);
    for (const chunked of [false, true]) {
      const answer = await send({ contentType: 'application/json', body: atLimit, chunked });
      assert.equal(answer.status, 200, `chunked=${chunked}`);
      assert.equal(JSON.parse(answer.text).body.text.length, BODY_LIMIT - 11);
    }
  });

  test('a multi-byte body split across chunks decodes whole', async () => {
    const body = JSON.stringify({ text: 'héllo wörld ✓'.repeat(20) });
    const answer = await send({ contentType: 'application/json', body, chunked: true });
    assert.equal(JSON.parse(answer.text).body.text, 'héllo wörld ✓'.repeat(20));
  });

  test('a hijacked answer is the handler’s own', async () => {
    const answer = await send({ contentType: 'application/json', body: '{"do":"stream"}' });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['content-type'], 'text/event-stream');
    assert.equal(answer.text, 'data: {"n":1}\n\ndata: [DONE]\n\n');
  });
});
