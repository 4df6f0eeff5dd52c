import type { Redis } from 'ioredis';

/** Counts the system-call-level writes on the connection's socket (one writev for a corked batch). */
export function countWrites(redis: Redis): () => number {
  const socket = redis.stream as unknown as Record<'_write' | '_writev', (...args: unknown[]) => void>;
  let writes = 0;
  for (const method of ['_write', '_writev'] as const) {
    const original = socket[method].bind(socket);
    socket[method] = (...args) => {
      writes++;
      original(...args);
    };
  }
  return () => writes;
}

/**
 * The names of the commands written on the connection's socket, in order (each command is a RESP
 * array of bulk strings; its first element is the name).
 */
export function writtenCommands(redis: Redis): () => string[] {
  const socket = redis.stream as unknown as Record<'_write' | '_writev', (...args: unknown[]) => void>;
  let pending = Buffer.alloc(0);
  const names: string[] = [];
  const take = (bytes: Buffer) => {
    pending = Buffer.concat([pending, bytes]);
    for (;;) {
      const parsed = parseCommand(pending);
      if (parsed === undefined) return;
      names.push(parsed.name);
      pending = pending.subarray(parsed.length);
    }
  };
  const originalWrite = socket._write.bind(socket);
  socket._write = (chunk, ...rest) => {
    take(Buffer.from(chunk as Buffer));
    originalWrite(chunk, ...rest);
  };
  const originalWritev = socket._writev.bind(socket);
  socket._writev = (chunks, ...rest) => {
    for (const { chunk } of chunks as Array<{ chunk: Buffer | string }>) take(Buffer.from(chunk));
    originalWritev(chunks, ...rest);
  };
  return () => [...names];
}

/** One whole command at the start of `bytes`: its name (lower case) and its length in bytes. */
function parseCommand(bytes: Buffer): { name: string; length: number } | undefined {
  const lineEnd = (from: number) => {
    const at = bytes.indexOf('\r\n', from);
    return at === -1 ? undefined : at;
  };
  const headerEnd = lineEnd(0);
  if (headerEnd === undefined) return undefined;
  const count = Number(bytes.toString('latin1', 1, headerEnd));
  let offset = headerEnd + 2;
  let name = '';
  for (let index = 0; index < count; index++) {
    const end = lineEnd(offset);
    if (end === undefined) return undefined;
    const size = Number(bytes.toString('latin1', offset + 1, end));
    const start = end + 2;
    if (bytes.length < start + size + 2) return undefined;
    if (index === 0) name = bytes.toString('latin1', start, start + size).toLowerCase();
    offset = start + size + 2;
  }
  return { name, length: offset };
}
