import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { IncomingHttpHeaders } from 'node:http';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as it arrived. */
  raw: Buffer;
}

export interface ReceiverReply {
  status: number;
  body?: string;
  headers?: Record<string, string>;
  /** Answer after this long (a slow receiver). */
  delayMs?: number;
}

export interface HttpsReceiver {
  origin: string;
  port: number;
  requests: ReceivedRequest[];
  url(path: string): string;
  /** Resolves once `count` requests (matching `path` when given) have arrived. */
  waitFor(count: number, path?: string): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** An HTTPS server on 127.0.0.1 (ephemeral port) that records every request and answers as told. */
export async function startHttpsReceiver(tls: { key: string; cert: string }, reply: (request: ReceivedRequest) => ReceiverReply = () => ({ status: 200 })): Promise<HttpsReceiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: Array<() => void> = [];
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received: ReceivedRequest = { method: request.method ?? '', path: request.url ?? '', headers: request.headers, raw: Buffer.concat(chunks) };
      requests.push(received);
      for (const waiter of waiters.splice(0)) waiter();
      const answer = reply(received);
      const send = () => {
        if (response.destroyed) return;
        response.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
        response.end(answer.body ?? 'ok');
      };
      if (answer.delayMs) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          send();
        }, answer.delayMs);
        timers.add(timer);
      } else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `https://127.0.0.1:${port}`;
  const matching = (path?: string) => requests.filter((request) => path === undefined || request.path === path);
  return {
    origin,
    port,
    requests,
    url: (path) => `${origin}${path}`,
    async waitFor(count, path) {
      while (matching(path).length < count) await new Promise<void>((resolve) => waiters.push(resolve));
      return matching(path);
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
