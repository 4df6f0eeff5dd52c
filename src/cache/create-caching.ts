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

/** Redis when a client is given (shared by instances), else an in-process LRU. */
export function createCaching(options: {
  redis?: Redis;
  maxEntries?: number;
  maxBytes?: number;
  onError?(error: unknown, context: string): void;
}): Caching {
  const cache: ResponseCache = options.redis
    ? createRedisResponseCache(options.redis)
    : createMemoryResponseCache({ maxEntries: options.maxEntries, maxBytes: options.maxBytes });
  return { cache, stage: createCacheStage({ cache, onError: (error) => options.onError?.(error, 'response cache unavailable; answering uncached') }) };
}
