import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * A Lua script run by its SHA-1 (EVALSHA), sent whole only when the server does not know it yet
 * (NOSCRIPT: first use, a restarted or flushed server). Sending the body on every call cost each
 * request a few kilobytes of writes and a hash of the body on the server.
 */
export interface RedisScript {
  run(redis: Redis, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown>;
}

export function redisScript(lua: string): RedisScript {
  const sha = createHash('sha1').update(lua).digest('hex');
  return {
    async run(redis, keys, args) {
      try {
        return await redis.evalsha(sha, keys.length, ...keys, ...args);
      } catch (error) {
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        return redis.eval(lua, keys.length, ...keys, ...args);
      }
    },
  };
}
