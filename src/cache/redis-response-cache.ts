import type { Redis } from 'ioredis';
import type { ResponseCache } from './response-cache.js';

/** Default bound on one stored answer: a long chat answer is tens of kB; a big embeddings batch can be megabytes. */
export const DEFAULT_MAX_REDIS_ENTRY_BYTES = 1024 * 1024;

export interface RedisCacheOptions {
  /** Namespace of every key; tests pass a unique one. */
  prefix?: string;
  /** Answers larger than this (serialised, in bytes) are not stored. */
  maxEntryBytes?: number;
}

/**
 * Redis-backed cache shared by gateway instances. SET with PX stores value and expiry in one atomic
 * command, so every entry expires by itself and the cache holds at most what was written within
 * one TTL, each entry bounded by maxEntryBytes. Redis's maxmemory policy is not relied on: on the
 * Redis that also holds credits and limits it must never evict (docs/deployment.md, "Redis memory").
 * The client is passed in (app.ts owns it).
 */
export function createRedisResponseCache<Value = unknown>(redis: Redis, options: RedisCacheOptions = {}): ResponseCache<Value> {
  const prefix = options.prefix ?? 'gw:cache:';
  const maxEntryBytes = options.maxEntryBytes ?? DEFAULT_MAX_REDIS_ENTRY_BYTES;
  return {
    async get(key) {
      const json = await redis.get(prefix + key);
      return json === null ? undefined : (JSON.parse(json) as Value);
    },
    async set(key, value, ttlMs) {
      if (!(ttlMs > 0)) return;
      const json = JSON.stringify(value);
      // Every UTF-16 unit is at most 3 UTF-8 bytes: only a string near the bound is measured.
      if (json.length * 3 > maxEntryBytes && Buffer.byteLength(json) > maxEntryBytes) return;
      await redis.set(prefix + key, json, 'PX', Math.ceil(ttlMs));
    },
    async delete(key) {
      await redis.del(prefix + key);
    },
  };
}
