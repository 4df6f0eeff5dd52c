import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a fake upstream received. */
export interface RecordedRequest {
  method: string;
  /** Path and query. */
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** The body parsed as JSON, when it is JSON. */
  json?: unknown;
}

export interface FakeReply {
  status?: number;
  headers?: Record<string, string>;
  /** A JSON value, raw bytes, or chunks written one by one (to exercise split reads). */
  body?: unknown;
  chunks?: Array<string | Buffer>;
}

export type FakeHandler = (request: RecordedRequest) => FakeReply | Promise<FakeReply>;

export interface FakeUpstream {
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  /** Answers the next request with this reply instead of the handler's (errors, rate limits). */
  failNext(reply: FakeReply): void;
  close(): Promise<void>;
}

/** A fake provider on 127.0.0.1 with an ephemeral port, recording what it receives. */
export async function startFakeUpstream(handler: FakeHandler): Promise<FakeUpstream> {
  const requests: RecordedRequest[] = [];
  const overrides: FakeReply[] = [];
  const server = createServer((incoming, response) => {
    const parts: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => parts.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(parts);
      const recorded: RecordedRequest = { method: incoming.method ?? 'GET', url: incoming.url ?? '/', headers: incoming.headers, body };
      if (String(incoming.headers['content-type'] ?? '').includes('json') && body.length > 0) {
        try {
          recorded.json = JSON.parse(body.toString('utf8'));
        } catch {
          // Recorded as bytes only.
        }
      }
      requests.push(recorded);
      const override = overrides.shift();
      Promise.resolve(override ?? handler(recorded))
        .then((reply) => send(response, reply))
        .catch((error: unknown) => send(response, { status: 500, body: { error: { message: String(error) } } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    failNext: (reply) => overrides.push(reply),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function send(response: ServerResponse, reply: FakeReply): Promise<void> {
  const headers = { ...reply.headers };
  if (reply.chunks) {
    response.writeHead(reply.status ?? 200, headers);
    for (const chunk of reply.chunks) {
      response.write(chunk);
      // Yield so that chunks reach the client in separate reads.
      await new Promise((resolve) => setImmediate(resolve));
    }
    response.end();
    return;
  }
  if (Buffer.isBuffer(reply.body) || reply.body instanceof Uint8Array) {
    response.writeHead(reply.status ?? 200, { 'content-type': 'application/octet-stream', ...headers });
    response.end(reply.body);
    return;
  }
  response.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...headers });
  response.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
}

/** Splits SSE text into pieces that cut through events, as networks do. */
export function splitForWire(text: string, pieceSize = 17): string[] {
  const pieces: string[] = [];
  for (let offset = 0; offset < text.length; offset += pieceSize) pieces.push(text.slice(offset, offset + pieceSize));
  return pieces;
}

export function sseEvent(data: unknown, event?: string): string {
  return `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
}

/** The last user message's text of an OpenAI-, Anthropic-, Gemini-, Cohere- or Converse-shaped body. */
export function lastUserText(messages: unknown): string {
  if (!Array.isArray(messages)) return '';
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index] as { role?: string; content?: unknown; parts?: unknown };
    if (message.role !== 'user') continue;
    const content = message.content ?? message.parts;
    if (typeof content === 'string') return content;
    if (Array.isArray(content)) {
      const texts = content.flatMap((part: { text?: unknown }) => (typeof part.text === 'string' ? [part.text] : []));
      if (texts.length > 0) return texts.join(' ');
    }
  }
  return '';
}
