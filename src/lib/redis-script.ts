import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { sendEncodedCommand, type CommandArgument } from './redis-encoded-command.js';

/**
 * A Lua script run by its SHA-1 (EVALSHA), sent whole only when the server does not know it yet
 * (NOSCRIPT: first use, a restarted or flushed server). Sending the body on every call cost each
 * request a few kilobytes of writes and a hash of the body on the server.
 */
export interface RedisScript {
  run(redis: Redis, keys: readonly string[], args: readonly CommandArgument[]): Promise<unknown>;
}

export function redisScript(lua: string): RedisScript {
  const sha = createHash('sha1').update(lua).digest('hex');
  // The leading arguments of EVALSHA for each key count, made once.
  const heads: string[][] = [];
  const headFor = (keyCount: number) => (heads[keyCount] ??= [sha, String(keyCount)]);
  return {
    async run(redis, keys, args) {
      try {
        // Encoded straight into one buffer: these scripts run several times on every call.
        return await sendEncodedCommand(redis, 'evalsha', headFor(keys.length), keys, args);
      } catch (error) {
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        return redis.eval(lua, keys.length, ...keys, ...args);
      }
    },
  };
}
