import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the fake upstream received, for assertions on what the gateway forwarded. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export interface FakeOpenAIUpstream {
  baseUrl: string;
  received: ReceivedRequest[];
  /** Next answers to give, consumed in order; when empty the default answer is used. */
  script: Array<{ status: number; body?: unknown; headers?: Record<string, string> }>;
  /** Delay between streamed chunks. */
  chunkDelayMs: number;
  close(): Promise<void>;
}

const MARKER = 'fake-openai-upstream';

/**
 * A small OpenAI-compatible server on 127.0.0.1: chat (JSON and SSE with a usage chunk when
 * stream_options.include_usage), completions and embeddings, with scripted failures.
 */
export async function startFakeOpenAIUpstream(): Promise<FakeOpenAIUpstream> {
  const received: ReceivedRequest[] = [];
  const state: FakeOpenAIUpstream = {
    baseUrl: '',
    received,
    script: [],
    chunkDelayMs: 0,
    close: async () => {},
  };
  const server: Server = createServer(async (request, response) => {
    let text = '';
    for await (const chunk of request) text += chunk;
    const body = text ? JSON.parse(text) : undefined;
    received.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body });
    const scripted = state.script.shift();
    if (scripted) {
      response.writeHead(scripted.status, { 'content-type': 'application/json', ...scripted.headers });
      response.end(JSON.stringify(scripted.body ?? {}));
      return;
    }
    const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18, prompt_tokens_details: { cached_tokens: 3 } };
    if (request.url === '/v1/chat/completions' && body?.stream) {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1, model: body.model };
      const pieces = ['Hello', ' from', ` ${MARKER}`];
      response.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`);
      for (const piece of pieces) {
        if (state.chunkDelayMs) await new Promise((resolve) => setTimeout(resolve, state.chunkDelayMs));
        response.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`);
      }
      response.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
      if (body.stream_options?.include_usage) response.write(`data: ${JSON.stringify({ ...base, choices: [], usage })}\n\n`);
      response.end('data: [DONE]\n\n');
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    if (request.url === '/v1/chat/completions') {
      response.end(
        JSON.stringify({
          id: 'chatcmpl-fake',
          object: 'chat.completion',
          created: 1,
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: `Hello from ${MARKER}` }, finish_reason: 'stop' }],
          usage,
        }),
      );
    } else if (request.url === '/v1/completions') {
      response.end(JSON.stringify({ id: 'cmpl-fake', object: 'text_completion', created: 1, model: body.model, choices: [{ text: MARKER, index: 0, finish_reason: 'stop', logprobs: null }], usage }));
    } else if (request.url === '/v1/embeddings') {
      const inputs = Array.isArray(body.input) ? body.input : [body.input];
      response.end(JSON.stringify({ object: 'list', model: body.model, data: inputs.map((_: unknown, index: number) => ({ object: 'embedding', index, embedding: [0.1, 0.2, index] })), usage: { prompt_tokens: 4, total_tokens: 4 } }));
    } else {
      response.writeHead(404);
      response.end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  state.baseUrl = `http://127.0.0.1:${port}/v1`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}

export const FAKE_UPSTREAM_MARKER = MARKER;
