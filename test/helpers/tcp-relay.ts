import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay on 127.0.0.1 in front of a real service (Redis, Postgres), to simulate that service
 * going away without stopping it for everyone else on the machine. `cut()` drops every open
 * connection and refuses new ones; `restore()` accepts again.
 */
export interface TcpRelay {
  port: number;
  /** The target URL with host and port replaced by the relay's (path and query kept). */
  url: string;
  cut(): void;
  restore(): void;
  readonly open: boolean;
  close(): Promise<void>;
}

export async function startTcpRelay(targetUrl: string, defaultPort: number): Promise<TcpRelay> {
  const target = new URL(targetUrl);
  const targetPort = Number(target.port || defaultPort);
  const targetHost = target.hostname || '127.0.0.1';
  const sockets = new Set<Socket>();
  let open = true;
  const server: Server = createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, targetHost);
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const url = new URL(targetUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    port,
    url: url.toString(),
    get open() {
      return open;
    },
    cut() {
      open = false;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    restore() {
      open = true;
    },
    close() {
      open = false;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
