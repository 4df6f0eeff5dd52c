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
