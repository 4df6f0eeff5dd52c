/**
 * Exact-match answer cache: memory (LRU, single instance) or Redis (shared by instances). Values are
 * JSON-serialisable and stored serialised, so a caller can never mutate a cached entry in place.
 * Keys arrive already hashed and org-scoped (see cacheKey).
 */
export interface ResponseCache<Value = unknown> {
  get(key: string): Promise<Value | undefined>;
  set(key: string, value: Value, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
}
