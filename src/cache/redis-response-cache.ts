import type { Redis } from 'ioredis';
import type { ResponseCache } from './response-cache.js';

export interface RedisCacheOptions {
  /** Namespace of every key; tests pass a unique one. */
  prefix?: string;
}

/**
 * Redis-backed cache shared by gateway instances. SET with PX stores value and expiry in one atomic
 * command; Redis's own maxmemory policy bounds its size. The client is passed in (app.ts owns it).
 */
export function createRedisResponseCache<Value = unknown>(redis: Redis, options: RedisCacheOptions = {}): ResponseCache<Value> {
  const prefix = options.prefix ?? 'gw:cache:';
  return {
    async get(key) {
      const json = await redis.get(prefix + key);
      return json === null ? undefined : (JSON.parse(json) as Value);
    },
    async set(key, value, ttlMs) {
      if (!(ttlMs > 0)) return;
      await redis.set(prefix + key, JSON.stringify(value), 'PX', Math.ceil(ttlMs));
    },
    async delete(key) {
      await redis.del(prefix + key);
    },
  };
}
