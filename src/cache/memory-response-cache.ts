import type { ResponseCache } from './response-cache.js';

export interface MemoryCacheOptions {
  maxEntries?: number;
  /** Upper bound on the summed size of stored JSON (UTF-16 code units × 2, a close estimate). */
  maxBytes?: number;
  now?: () => number;
}

interface Entry {
  json: string;
  bytes: number;
  expiresAt: number;
}

/**
 * In-process LRU bounded by entry count and bytes. A Map keeps insertion order, so re-inserting on
 * read makes the first key the least recently used; expired entries are dropped when read or evicted.
 */
export function createMemoryResponseCache<Value = unknown>(options: MemoryCacheOptions = {}): ResponseCache<Value> & { readonly size: number; readonly bytes: number } {
  const maxEntries = options.maxEntries ?? 10_000;
  const maxBytes = options.maxBytes ?? 256 * 1024 * 1024;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  let totalBytes = 0;

  function remove(key: string): void {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    totalBytes -= entry.bytes;
  }

  return {
    async get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt <= now()) {
        remove(key);
        return undefined;
      }
      entries.delete(key);
      entries.set(key, entry);
      return JSON.parse(entry.json) as Value;
    },
    async set(key, value, ttlMs) {
      if (!(ttlMs > 0)) return;
      const json = JSON.stringify(value);
      const bytes = (json.length + key.length) * 2;
      remove(key);
      if (bytes > maxBytes) return;
      entries.set(key, { json, bytes, expiresAt: now() + ttlMs });
      totalBytes += bytes;
      for (const oldest of entries.keys()) {
        if (entries.size <= maxEntries && totalBytes <= maxBytes) break;
        remove(oldest);
      }
    },
    async delete(key) {
      remove(key);
    },
    get size() {
      return entries.size;
    },
    get bytes() {
      return totalBytes;
    },
  };
}
