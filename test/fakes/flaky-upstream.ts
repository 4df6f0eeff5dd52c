import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OpenAI-compatible chat upstream on 127.0.0.1 that misbehaves on cue. Each request takes the
 * next scripted behaviour, or the default once the script is used up. Answers say which upstream
 * served them ("from <name>"), so tests can tell deployments apart.
 */
export type FlakyBehaviour =
  | { kind: 'ok' }
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: unknown }
  /** Accepts the request and never answers. */
  | { kind: 'hang' }
  /** 200 with a body that is not JSON (non-stream) or not JSON events (stream). */
  | { kind: 'garbage' }
  /** Closes the connection without any answer. */
  | { kind: 'drop' }
  /** Streams `after` chunks, then closes the connection without [DONE]. */
  | { kind: 'drop-mid-stream'; after: number }
  /** Streams `after` chunks, then sends nothing more and keeps the connection open. */
  | { kind: 'stall-mid-stream'; after: number };

export interface FlakyUpstream {
  readonly name: string;
  /** `http://127.0.0.1:<port>/v1` */
  readonly baseUrl: string;
  /** Arrival time (performance.now()) of every request. */
  readonly arrivals: number[];
  readonly hits: () => number;
  script(...behaviours: FlakyBehaviour[]): void;
  setDefault(behaviour: FlakyBehaviour): void;
  close(): Promise<void>;
}

export async function startFlakyUpstream(name: string, initialDefault: FlakyBehaviour = { kind: 'ok' }): Promise<FlakyUpstream> {
  const arrivals: number[] = [];
  const queue: FlakyBehaviour[] = [];
  let fallback = initialDefault;
  const server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (chunk: Buffer) => parts.push(chunk));
    request.on('end', () => {
      arrivals.push(performance.now());
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8'));
      } catch {
        // A request we cannot read is answered like any other.
      }
      void answer(request, response, queue.shift() ?? fallback, body, name);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    name,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    arrivals,
    hits: () => arrivals.length,
    script: (...behaviours) => void queue.push(...behaviours),
    setDefault(behaviour) {
      fallback = behaviour;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The content words a successful answer from `name` carries, one stream chunk each. */
export function answerPieces(name: string): string[] {
  return ['from', ' ', name];
}

async function answer(
  request: IncomingMessage,
  response: ServerResponse,
  behaviour: FlakyBehaviour,
  body: Record<string, unknown>,
  name: string,
): Promise<void> {
  const stream = body.stream === true;
  const model = String(body.model ?? 'unknown');
  switch (behaviour.kind) {
    case 'hang':
      return;
    case 'drop':
      request.socket.destroy();
      return;
    case 'status':
      response.writeHead(behaviour.status, { 'content-type': 'application/json', ...behaviour.headers });
      response.end(JSON.stringify(behaviour.body ?? { error: { message: `${name} failed`, type: 'server_error' } }));
      return;
    case 'garbage':
      response.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json' });
      response.end(stream ? 'data: {not json at all\n\n' : '<html>definitely not json');
      return;
    case 'ok':
    case 'stall-mid-stream':
    case 'drop-mid-stream': {
      if (!stream) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(completion(model, name)));
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const events = streamEvents(model, name);
      const limit = behaviour.kind === 'ok' ? events.length : behaviour.after;
      for (const event of events.slice(0, limit)) {
        response.write(`data: ${event}\n\n`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      if (behaviour.kind === 'drop-mid-stream') {
        // Let the gateway read what was sent before the connection goes (a destroyed socket drops unread data).
        await new Promise((resolve) => setTimeout(resolve, 50));
        request.socket.destroy();
      } else if (behaviour.kind === 'ok') response.end();
      return;
    }
  }
}

function completion(model: string, name: string) {
  return {
    id: `chatcmpl-${name}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: answerPieces(name).join('') }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 },
  };
}

function streamEvents(model: string, name: string): string[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    JSON.stringify({
      id: `chatcmpl-${name}`,
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
  return [
    chunk({ role: 'assistant', content: '' }),
    ...answerPieces(name).map((piece) => chunk({ content: piece })),
    chunk({}, 'stop'),
    JSON.stringify({ id: `chatcmpl-${name}`, object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [], usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 } }),
    '[DONE]',
  ];
}
