import type { Redis } from 'ioredis';
import type { Stage } from '../pipeline/stage.js';
import { createCacheStage } from './cache-stage.js';
import { createMemoryResponseCache } from './memory-response-cache.js';
import { createRedisResponseCache } from './redis-response-cache.js';
import type { ResponseCache } from './response-cache.js';

export interface Caching {
  /** The answer cache (also usable for the model catalog at its route). */
  cache: ResponseCache;
  stage: Stage;
}

/**
 * Redis when a client is given (shared by instances), else an in-process LRU. app.ts passes the
 * client of GW_CACHE_REDIS_URL when set (a Redis of the cache's own, free to evict), else the one of
 * GW_REDIS_URL (docs/deployment.md, "Redis memory").
 */
export function createCaching(options: {
  redis?: Redis;
  maxEntries?: number;
  maxBytes?: number;
  /** Bound on one answer stored in Redis (default DEFAULT_MAX_REDIS_ENTRY_BYTES). */
  maxRedisEntryBytes?: number;
  onError?(error: unknown, context: string): void;
}): Caching {
  const cache: ResponseCache = options.redis
    ? createRedisResponseCache(options.redis, { maxEntryBytes: options.maxRedisEntryBytes })
    : createMemoryResponseCache({ maxEntries: options.maxEntries, maxBytes: options.maxBytes });
  return { cache, stage: createCacheStage({ cache, onError: (error) => options.onError?.(error, 'response cache unavailable; answering uncached') }) };
}
