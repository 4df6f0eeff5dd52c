import { GatewayError } from '../errors/gateway-error.js';
import type { Awaitable } from '../lib/awaitable.js';
import type { ChangeFeed } from '../lib/change-feed.js';
import { withTimeout } from '../lib/with-timeout.js';
import type { TenancyStore } from '../tenancy/tenancy-store.js';
import type { AuthContext } from '../tenancy/tenancy-types.js';
import { hashVirtualKey, looksLikeVirtualKey } from './virtual-key-format.js';

export interface KeyAuthenticator {
  /** Resolves a bearer token to its key, org and team; 401 invalid_api_key for anything else. */
  authenticate(token: string | undefined): Promise<AuthContext>;
  /**
   * For the inference path: a cached key is answered at once, while the shared change version is
   * read alongside (its Redis round trip overlaps the rate-limit call instead of preceding it).
   * `current`, when set, settles true if the cached entry was loaded under the version now in
   * force, and false if it must not be trusted (a change since, or the version could not be read);
   * the caller then authenticates again before anything is spent (an upstream request that left
   * early is cancelled: pipeline/admission.ts). A key answered from the cache is answered
   * synchronously, without a promise.
   */
  authenticateEarly(token: string | undefined): Awaitable<EarlyAuthentication>;
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
  /** Longest wait for the shared change version before the cache is bypassed for this call. */
  versionTimeoutMs?: number;
  now?: () => number;
}

export interface EarlyAuthentication {
  auth: AuthContext;
  /** Never rejects; undefined when nothing is left to check (no shared feed, or a fresh load). */
  current: Promise<boolean> | undefined;
}

const rejected = () =>
  new GatewayError('invalid_api_key', 'Invalid API key. Pass a valid gw virtual key as "Authorization: Bearer sk-gw-…".');

interface CacheEntry {
  context: AuthContext | undefined;
  expiresAt: number;
  /** The shared change version read before the entry was loaded (undefined with a local feed). */
  version: string | undefined;
}

/** Read, but not trusted: the shared version could not be read, so the store is asked. */
const UNKNOWN = Symbol('unknown version');

/**
 * Serves key lookups from memory (the hot path never queries the database for a known key) and
 * drops entries the moment a change notice names their key, team or org — on every instance when
 * the change feed is Redis. With a shared feed, each call also reads the feed's version (one Redis
 * GET) and trusts only entries loaded under the current version: a revocation acknowledged on one
 * instance is seen by the next call on any other, even before its pub/sub notice arrives. When the
 * feed confirms the version in the background (`confirmedVersion`), a call uses that instead of a
 * read of its own. When the version cannot be read (Redis away) the cache is bypassed and the
 * database answers.
 */
export function createKeyAuthenticator(options: KeyAuthenticatorOptions): KeyAuthenticator {
  const ttlMs = options.cacheTtlMs ?? 30_000;
  const versionTimeoutMs = options.versionTimeoutMs ?? 500;
  const readVersion = options.changes.version?.bind(options.changes);
  const confirmedVersion = options.changes.confirmedVersion?.bind(options.changes);

  async function currentVersion(): Promise<string | undefined | typeof UNKNOWN> {
    if (!readVersion) return undefined;
    // Late or failed alike: the version is unknown, and no cache entry is trusted for this call.
    return withTimeout(readVersion(), versionTimeoutMs, 'change version read timed out').catch(() => UNKNOWN);
  }
  const now = options.now ?? Date.now;
  // Keyed by the presented token, so a cached key costs no HMAC; the token is in memory for the
  // request anyway, and entries never leave the process.
  const byToken = new Map<string, CacheEntry>();
  const lastUsed = new Map<string, number>();

  const unsubscribe = options.changes.subscribe((notice) => {
    if (notice.kind === 'all') return byToken.clear();
    if (notice.kind !== 'key' && notice.kind !== 'org' && notice.kind !== 'team') return;
    for (const [token, entry] of byToken) {
      const context = entry.context;
      if (!context) {
        // Negative entries are dropped on any key change: a key may have just been created.
        if (notice.kind === 'key') byToken.delete(token);
        continue;
      }
      if (
        (notice.kind === 'key' && context.key.id === notice.id) ||
        (notice.kind === 'org' && context.org.id === notice.id) ||
        (notice.kind === 'team' && context.team?.id === notice.id)
      ) {
        byToken.delete(token);
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

  async function authenticate(token: string | undefined): Promise<AuthContext> {
    if (!token || !looksLikeVirtualKey(token)) throw rejected();
    const time = now();
    const version = await currentVersion();
    let entry = byToken.get(token);
    if (!entry || entry.expiresAt <= time || entry.version !== version) {
      let context: AuthContext | undefined;
      try {
        context = await load(hashVirtualKey(token, options.hashKey));
      } catch (error) {
        throw new GatewayError('service_unavailable', 'The key store is unavailable; retry shortly.', { cause: error });
      }
      entry = { context, expiresAt: time + (context ? ttlMs : Math.min(ttlMs, 5_000)), version: version === UNKNOWN ? undefined : version };
      if (version !== UNKNOWN) {
        if (byToken.size > 100_000) byToken.clear();
        byToken.set(token, entry);
      }
    }
    if (!entry.context) throw rejected();
    return entry.context;
  }

  async function authenticateAfresh(token: string | undefined): Promise<EarlyAuthentication> {
    return { auth: await authenticate(token), current: undefined };
  }

  return {
    authenticate,
    authenticateEarly(token) {
      const entry = token ? byToken.get(token) : undefined;
      if (!entry?.context || entry.expiresAt <= now()) return authenticateAfresh(token);
      // With a feed in this process only, an entry no change notice has dropped is current.
      if (!readVersion) return { auth: entry.context, current: undefined };
      const loadedUnder = entry.version;
      // Confirmed recently enough by the feed itself: decided here, with no read of this call's own.
      const confirmed = confirmedVersion?.();
      if (confirmed !== undefined) {
        if (confirmed === loadedUnder) return { auth: entry.context, current: undefined };
        return authenticateAfresh(token);
      }
      const current = currentVersion().then((version) => version !== UNKNOWN && version === loadedUnder);
      return { auth: entry.context, current };
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
