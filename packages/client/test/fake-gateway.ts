import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the fake gateway received. */
export interface SeenRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  authorization: string | undefined;
  body: unknown;
}

export interface FakeGateway {
  baseURL: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** Error answers chosen by the request's model name, shaped as gw sends them. */
const ERRORS: Record<string, { status: number; error: Record<string, unknown>; headers?: Record<string, string> }> = {
  'blocked-model': {
    status: 400,
    error: { message: 'Blocked by guardrail pii-guard', type: 'invalid_request_error', code: 'guardrail_blocked', param: null, guardrail_name: 'pii-guard' },
  },
  'broke-model': {
    status: 402,
    error: { message: 'Insufficient credits', type: 'insufficient_credits', code: 'insufficient_credits', param: null },
  },
  'rpm-model': {
    status: 429,
    error: { message: 'RPM limit exceeded', type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null },
    headers: { 'retry-after': '7' },
  },
  'tpm-model': {
    status: 429,
    error: { message: 'TPM limit exceeded', type: 'rate_limit_error', code: 'tpm_limit_exceeded', param: null },
    headers: { 'retry-after': '13' },
  },
  'credit-down-model': {
    status: 503,
    error: { message: 'Credit system unavailable', type: 'service_unavailable', code: 'credit_check_failed', param: null },
  },
  'upstream-down-model': {
    status: 503,
    error: { message: 'Provider unavailable', type: 'service_unavailable', code: 'upstream_unavailable', param: null },
  },
  'bad-model': {
    status: 400,
    error: { message: 'temperature must be at most 2', type: 'invalid_request_error', code: 'invalid_request', param: 'temperature' },
  },
};

const META_HEADERS = {
  'x-gw-latency-ms': '42',
  'x-gw-guardrails-applied': 'pii-guard, injection-guard',
  'x-gw-post-call-guardrails': 'toxicity',
  'x-gw-prompt-version': '3',
  'x-gw-ab-test': 'variant-b',
  'x-gw-cache': 'miss',
  'x-gw-org-id': 'org_1',
  'x-gw-key-alias': 'ci-key',
  'x-gw-route': 'openai/gpt-test',
  'x-ratelimit-limit-requests': '500',
  'x-ratelimit-remaining-requests': '499',
};

/** A tiny stand-in for gw on 127.0.0.1 that answers with gw's headers, error bodies and stream shape. */
export async function startFakeGateway(): Promise<FakeGateway> {
  const seen: SeenRequest[] = [];
  let counter = 0;
  const server = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: String(error), type: 'internal_error', code: 'internal_error', param: null } }));
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const text = await readBody(request);
    const body: unknown = text ? JSON.parse(text) : undefined;
    seen.push({
      method: request.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      authorization: request.headers.authorization,
      body,
    });
    counter += 1;
    const requestId = `req_fake_${counter}`;
    const json = (status: number, payload: unknown, headers: Record<string, string> = {}): void => {
      response.writeHead(status, { 'content-type': 'application/json', 'x-gw-request-id': requestId, ...headers });
      response.end(JSON.stringify(payload));
    };
    const model = (body as { model?: string } | undefined)?.model ?? '';
    const failure = ERRORS[model];
    if (failure) return json(failure.status, { error: failure.error }, failure.headers);

    const route = `${request.method} ${url.pathname}`;
    if (route === 'POST /v1/chat/completions') {
      const chat = body as { stream?: boolean; stream_options?: { include_usage?: boolean } };
      if (chat.stream) return streamChat(response, requestId, chat.stream_options?.include_usage === true, model);
      return json(
        200,
        {
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from gw' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
        },
        { ...META_HEADERS, 'x-gw-request-cost': '0.000123456' },
      );
    }
    if (route === 'POST /v1/embeddings') {
      return json(
        200,
        { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.5, 0.25] }], model, usage: { prompt_tokens: 2, total_tokens: 2 } },
        { 'x-gw-request-cost': '0.00000002', 'x-gw-cache': 'hit' },
      );
    }
    if (route === 'GET /v1/models') {
      return json(200, { object: 'list', data: [{ id: 'gpt-test', object: 'model', created: 1, owned_by: 'gw' }] }, { 'x-gw-cache': 'hit' });
    }
    if (route === 'GET /v1/videos/vid_1/content') {
      response.writeHead(200, { 'content-type': 'video/mp4', 'x-gw-request-id': requestId });
      response.end(Buffer.from([0, 1, 2, 3, 255]));
      return;
    }
    // Everything else echoes what it received, so tests can check paths, queries and bodies.
    return json(200, { echo: { method: request.method, path: url.pathname, query: Object.fromEntries(url.searchParams), body } }, {
      'x-gw-request-cost': '0.5',
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    seen,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function streamChat(response: ServerResponse, requestId: string, includeUsage: boolean, model: string): void {
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'x-gw-request-id': requestId,
    'x-gw-latency-ms': '7',
    'x-gw-stream-buffered': 'true',
  });
  const base = { id: 'chatcmpl-2', object: 'chat.completion.chunk', created: 1, model: 'gpt-test' };
  const events: unknown[] = [
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: { content: 'lo' }, finish_reason: 'stop' }] },
  ];
  if (model === 'stream-blocked-model') {
    // A post-call guardrail blocking a buffered stream: an error event after the 200, and no [DONE].
    response.write(`data: ${JSON.stringify(events[0])}\n\n`);
    const error = { message: 'Blocked by guardrail toxicity', type: 'invalid_request_error', code: 'guardrail_blocked', param: null, guardrail_name: 'toxicity' };
    response.end(`data: ${JSON.stringify({ error })}\n\n`);
    return;
  }
  if (includeUsage) {
    events.push({ ...base, choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 }, gw_cost_usd: '0.000000789' });
  }
  for (const event of events) response.write(`data: ${JSON.stringify(event)}\n\n`);
  response.end('data: [DONE]\n\n');
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}
