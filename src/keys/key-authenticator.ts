import { GatewayError } from '../errors/gateway-error.js';
import type { ChangeFeed } from '../lib/change-feed.js';
import type { TenancyStore } from '../tenancy/tenancy-store.js';
import type { AuthContext } from '../tenancy/tenancy-types.js';
import { hashVirtualKey, looksLikeVirtualKey } from './virtual-key-format.js';

export interface KeyAuthenticator {
  /** Resolves a bearer token to its key, org and team; 401 invalid_api_key for anything else. */
  authenticate(token: string | undefined): Promise<AuthContext>;
  /** Records a use; last-used times are written in batches. */
  markUsed(keyId: string): void;
  flushLastUsed(): Promise<void>;
  close(): Promise<void>;
}

export interface KeyAuthenticatorOptions {
  store: TenancyStore;
  hashKey: Buffer;
  changes: ChangeFeed;
  /** Safety net only: entries are dropped on change notices at once; this bounds staleness if a notice is lost. */
  cacheTtlMs?: number;
  now?: () => number;
}

const rejected = () =>
  new GatewayError('invalid_api_key', 'Invalid API key. Pass a valid gw virtual key as "Authorization: Bearer sk-gw-…".');

interface CacheEntry {
  context: AuthContext | undefined;
  expiresAt: number;
}

/**
 * Serves key lookups from memory (the hot path never queries the database for a known key) and
 * drops entries the moment a change notice names their key, team or org — on every instance when
 * the change feed is Redis.
 */
export function createKeyAuthenticator(options: KeyAuthenticatorOptions): KeyAuthenticator {
  const ttlMs = options.cacheTtlMs ?? 30_000;
  const now = options.now ?? Date.now;
  const byHash = new Map<string, CacheEntry>();
  const lastUsed = new Map<string, number>();

  const unsubscribe = options.changes.subscribe((notice) => {
    if (notice.kind === 'all') return byHash.clear();
    if (notice.kind !== 'key' && notice.kind !== 'org' && notice.kind !== 'team') return;
    for (const [hash, entry] of byHash) {
      const context = entry.context;
      if (!context) {
        // Negative entries are dropped on any key change: a key may have just been created.
        if (notice.kind === 'key') byHash.delete(hash);
        continue;
      }
      if (
        (notice.kind === 'key' && context.key.id === notice.id) ||
        (notice.kind === 'org' && context.org.id === notice.id) ||
        (notice.kind === 'team' && context.team?.id === notice.id)
      ) {
        byHash.delete(hash);
      }
    }
  });

  async function load(hash: string): Promise<AuthContext | undefined> {
    const key = await options.store.findKeyByHash(hash);
    if (!key || key.status !== 'active') return undefined;
    const org = await options.store.getOrganization(key.orgId);
    if (!org) return undefined;
    const team = key.teamId ? ((await options.store.getTeam(key.teamId)) ?? null) : null;
    return { key, org, team };
  }

  return {
    async authenticate(token) {
      if (!token || !looksLikeVirtualKey(token)) throw rejected();
      const hash = hashVirtualKey(token, options.hashKey);
      const time = now();
      let entry = byHash.get(hash);
      if (!entry || entry.expiresAt <= time) {
        let context: AuthContext | undefined;
        try {
          context = await load(hash);
        } catch (error) {
          throw new GatewayError('service_unavailable', 'The key store is unavailable; retry shortly.', { cause: error });
        }
        entry = { context, expiresAt: time + (context ? ttlMs : Math.min(ttlMs, 5_000)) };
        if (byHash.size > 100_000) byHash.clear();
        byHash.set(hash, entry);
      }
      if (!entry.context) throw rejected();
      return entry.context;
    },
    markUsed(keyId) {
      lastUsed.set(keyId, now());
    },
    async flushLastUsed() {
      if (lastUsed.size === 0) return;
      const batch = new Map(lastUsed);
      lastUsed.clear();
      await options.store.touchKeys(batch);
    },
    async close() {
      unsubscribe();
    },
  };
}
