import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { adminRequest } from '../helpers/start-gateway.js';
import { startProviderGateway, WEATHER_TOOL, type ProviderGateway } from './providers-gateway.js';

/** The spec's error body and the headers every answer carries. */
function assertGatewayError(status: number, headers: Headers, body: any, expected: { status: number; code: string; param?: string; message?: RegExp }): void {
  const text = JSON.stringify(body);
  assert.equal(status, expected.status, text);
  assert.deepEqual(Object.keys(body ?? {}), ['error'], text);
  assert.equal(body.error.code, expected.code, text);
  assert.equal(typeof body.error.type, 'string', text);
  assert.equal(typeof body.error.message, 'string', text);
  if (expected.param !== undefined) assert.equal(body.error.param, expected.param, text);
  if (expected.message) assert.match(body.error.message, expected.message, text);
  assert.match(headers.get('x-gw-request-id') ?? '', /^req_/, `x-gw-request-id on ${text}`);
  assert.match(headers.get('x-gw-latency-ms') ?? '', /^\d+\.\d\d$/, `x-gw-latency-ms on ${text}`);
}

/** Sends raw bytes on a fresh connection and reads until the gateway closes it. */
function rawExchange(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (received += chunk));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}

/** `{"a":{"a":…1…}}`, `depth` objects deep (as text: JSON.stringify itself overflows on the deepest). */
const nestedText = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('the HTTP edge answers every refusal in the error body with the x-gw headers', () => {
  let gateway: ProviderGateway;
  /** GET of an absolute path with the gateway key. */
  const get = (path: string) => fetch(`${gateway.running.url}${path}`, { headers: { authorization: `Bearer ${gateway.running.apiKey}` } });
  const chat = (extra: Record<string, unknown>) =>
    gateway.post('/chat/completions', { model: 'local-chat', messages: [{ role: 'user', content: 'hi' }], ...extra });

  before(async () => {
    gateway = await startProviderGateway([{ id: 'acme/50%-off', provider: 'local', upstreamModel: 'local-chat', baseUrl: 'http://127.0.0.1:9' }], {});
  });
  after(async () => gateway?.close());

  test('a path that does not decode is a 400 in the error body, not a framework answer', async () => {
    for (const path of ['/v1/%E0', '/api/credits/balance%ZZ', '/v1/models/%E0%A4%A', '/gw/channels/%E0%A4%A']) {
      const response = await get(path);
      assertGatewayError(response.status, response.headers, await response.json(), { status: 400, code: 'invalid_request', message: /path is not valid/ });
    }
  });

  test('an over-long id is an unknown id: 404 of its resource, or 404 before routing past 200 characters', async () => {
    const video = await gateway.get(`/videos/${'a'.repeat(300)}`);
    assertGatewayError(video.status, video.headers, await video.json(), { status: 404, code: 'not_found' });
    const channel = await get(`/gw/channels/${'a'.repeat(101)}`);
    assertGatewayError(channel.status, channel.headers, await channel.json(), { status: 404, code: 'not_found', message: /No alert channel/ });
    const key = await fetch(`${gateway.running.url}/api/admin/keys/${'k'.repeat(150)}`, { headers: { authorization: `Bearer ${gateway.running.masterKey}` } });
    assertGatewayError(key.status, key.headers, await key.json(), { status: 404, code: 'not_found', message: /Unknown key/ });
    const longer = await fetch(`${gateway.running.url}/api/admin/keys/${'k'.repeat(5_000)}`, { headers: { authorization: `Bearer ${gateway.running.masterKey}` } });
    assertGatewayError(longer.status, longer.headers, await longer.json(), { status: 404, code: 'not_found' });
  });

  test('GET /v1/models/{id} decodes the id once: "%" and "/" in ids are looked up, unknown ids are 404', async () => {
    const percent = await gateway.get('/models/%25');
    assertGatewayError(percent.status, percent.headers, await percent.json(), { status: 404, code: 'model_not_found', param: 'model' });
    const found = await gateway.get(`/models/${encodeURIComponent('acme/50%-off')}`);
    assert.equal(found.status, 200);
    assert.equal((await found.json()).id, 'acme/50%-off');
    const unescapedSlash = await gateway.get('/models/acme/50%25-off');
    assert.equal(unescapedSlash.status, 200);
  });

  test('a Content-Length shorter than the body gets the error body in the raw answer, and the gateway serves on', async () => {
    const body = '{"model":"local-chat","messages":[{"role":"user","content":"hi"}]}';
    const answer = await rawExchange(
      gateway.running.url,
      `POST /v1/chat/completions HTTP/1.1\r\nhost: gw\r\nauthorization: Bearer ${gateway.running.apiKey}\r\ncontent-type: application/json\r\ncontent-length: 5\r\n\r\n${body}`,
    );
    // The first five bytes are the request's body (a 400: not JSON); what follows is not a request
    // (a 400, and the connection closes). node:http alone gives only the second answer, gw's HTTP
    // edge both: either way every answer is the error body, and the last one closes the connection.
    const answers = answer.split(/(?=HTTP\/1\.1 \d{3} )/);
    for (const each of answers) {
      const [head, text] = each.split('\r\n\r\n');
      assert.match(head!, /^HTTP\/1\.1 400 /, answer);
      assert.match(head!, /\r\nx-gw-request-id: req_/i, answer);
      const parsed = JSON.parse(text!);
      assert.equal(parsed.error.code, 'invalid_request', answer);
      assert.equal(parsed.error.type, 'invalid_request_error', answer);
    }
    assert.match(answers[answers.length - 1]!, /\r\nconnection: close/i, answer);
    assert.equal((await chat({})).status, 200);
  });

  test("a request whose body does not arrive in time is a 408 in the gateway's error body, and the connection closes", async () => {
    const server = gateway.running.gateway.server.server;
    const [headersTimeout, requestTimeout] = [server.headersTimeout, server.requestTimeout];
    server.headersTimeout = 1000;
    server.requestTimeout = 1000;
    try {
      // A served call's head, then only part of its body: the edge holds it, and gives up as node:http would.
      const answer = await rawExchange(
        gateway.running.url,
        `POST /v1/chat/completions HTTP/1.1\r\nhost: gw\r\nauthorization: Bearer ${gateway.running.apiKey}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"model":`,
      );
      const [head, text] = answer.split('\r\n\r\n');
      assert.match(head!, /^HTTP\/1\.1 408 /, answer);
      assert.match(head!, /\r\nx-gw-request-id: req_/i, answer);
      assert.match(head!, /\r\nconnection: close/i, answer);
      assert.equal(JSON.parse(text!).error.code, 'invalid_request', answer);
    } finally {
      server.headersTimeout = headersTimeout;
      server.requestTimeout = requestTimeout;
    }
    assert.equal((await chat({})).status, 200);
  });

  test('JSON nested past 128 levels is a 400 saying so, on the direct path and through the framework alike', async () => {
    const messages = '"model":"local-chat","messages":[{"role":"user","content":"hi"}]';
    const deepBodies = [
      `{${messages},"extra":${nestedText(10_000)}}`,
      `{${messages},"metadata":${nestedText(500)}}`,
      `{${messages},"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":${nestedText(200)}}}}]}`,
    ];
    const send = (path: string, body: string, token = gateway.running.apiKey) =>
      fetch(`${gateway.running.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
    for (const body of deepBodies) {
      const direct = await send('/v1/chat/completions', body);
      assertGatewayError(direct.status, direct.headers, await direct.json(), { status: 400, code: 'invalid_request', message: /nested too deeply.*128/ });
      // A query string sends the call through Fastify's own parser.
      const framework = await send('/v1/chat/completions?via=framework', body);
      assertGatewayError(framework.status, framework.headers, await framework.json(), { status: 400, code: 'invalid_request', message: /nested too deeply/ });
    }
    const admin = await send('/api/admin/orgs', `{"name":"deep","settings":${nestedText(300)}}`, gateway.running.masterKey);
    assertGatewayError(admin.status, admin.headers, await admin.json(), { status: 400, code: 'invalid_request', message: /nested too deeply/ });
    // A real tool schema, some levels deep, is fine.
    const schema = JSON.parse(nestedText(30));
    assert.equal((await chat({ tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: schema } } }] })).status, 200);
  });

  test("max_tokens above the model's max output (local-chat: 4096) is a 400 naming it, for chat and completions", async () => {
    for (const [path, body, param] of [
      ['/chat/completions', { max_tokens: 400_000 }, 'max_tokens'],
      ['/chat/completions', { max_tokens: 600_000 }, 'max_tokens'],
      ['/chat/completions', { max_completion_tokens: 4_097 }, 'max_completion_tokens'],
      ['/completions', { max_tokens: 5_000 }, 'max_tokens'],
    ] as const) {
      const base = path === '/completions' ? { model: 'local-chat', prompt: 'hi' } : { model: 'local-chat', messages: [{ role: 'user', content: 'hi' }] };
      const refused = await gateway.post(path, { ...base, ...body });
      assertGatewayError(refused.status, refused.headers, refused.json, { status: 400, code: 'invalid_request', param, message: /4096/ });
      assert.equal(refused.headers.get('retry-after'), null);
    }
    assert.equal((await chat({ max_tokens: 4_096 })).status, 200);
  });

  test('a request counting more tokens than its whole TPM limit is a 400 naming max_tokens, without Retry-After', async () => {
    const key = await adminRequest(gateway.running, 'POST', '/api/admin/keys', { org_id: gateway.running.orgId, name: 'small tpm', limits: { tpm: 1_000 } });
    assert.equal(key.status, 200, JSON.stringify(key.body));
    const response = await fetch(`${gateway.running.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.body.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2_000 }),
    });
    assertGatewayError(response.status, response.headers, await response.json(), { status: 400, code: 'invalid_request', param: 'max_tokens', message: /1000 tokens per minute/ });
    assert.equal(response.headers.get('retry-after'), null);
  });

  test('message content is required (OpenAI contract); an assistant turn calling tools may leave it null', async () => {
    for (const [messages, param] of [
      [[{ role: 'user' }], 'messages.0.content'],
      [[{ role: 'user', content: null }], 'messages.0.content'],
      [[{ role: 'user', content: [] }], 'messages.0.content'],
      [[{ role: 'system', content: 'be brief' }, { role: 'user', content: [{ type: 'text', text: 5 }] }], 'messages.1.content.0.text'],
      [[{ role: 'user', content: 'hi' }, { role: 'assistant' }], 'messages.1.content'],
      [[{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c1' }], 'messages.2.content'],
    ] as const) {
      const refused = await chat({ messages });
      assertGatewayError(refused.status, refused.headers, refused.json, { status: 400, code: 'invalid_request', param });
    }
    const conversation = [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
      { role: 'user', content: [{ type: 'text', text: 'And tomorrow?' }] },
    ];
    const answered = await chat({ messages: conversation, tools: [WEATHER_TOOL] });
    assert.equal(answered.status, 200, JSON.stringify(answered.json));
  });

  test('multipart/form-data to a JSON endpoint gets the same Content-Type error as text/plain', async () => {
    const form = new FormData();
    form.set('model', 'local-chat');
    form.set('file', new Blob(['x']), 'x.txt');
    const authorization = { authorization: `Bearer ${gateway.running.apiKey}` };
    const multipart = await fetch(`${gateway.running.baseURL}/chat/completions`, { method: 'POST', headers: authorization, body: form });
    const plain = await fetch(`${gateway.running.baseURL}/chat/completions`, { method: 'POST', headers: { ...authorization, 'content-type': 'text/plain' }, body: 'x' });
    const plainBody = await plain.json();
    assertGatewayError(multipart.status, multipart.headers, await multipart.json(), { status: plain.status, code: plainBody.error.code, message: /Unsupported Content-Type/ });
    // The upload endpoints still take it.
    const upload = new FormData();
    upload.set('model', 'local-image');
    upload.set('prompt', 'hat');
    const edits = await fetch(`${gateway.running.baseURL}/images/edits`, { method: 'POST', headers: authorization, body: upload });
    const editsBody = await edits.json();
    assert.equal(editsBody.error?.param, 'image', JSON.stringify(editsBody));
  });
});
