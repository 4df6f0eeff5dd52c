import type { ChangeFeed } from './change-feed.js';

/**
 * Per-org definitions (guardrails, experiments) read on every call are served from memory. An
 * `{kind:'org'}` change notice drops the org's entry on every instance at once; the TTL only
 * bounds staleness should a notice be lost.
 */
export interface PerOrgCache<T> {
  get(orgId: string): Promise<T>;
  /**
   * The org's value when it is in memory, fresh and loaded; else undefined (then use get). Lets a
   * stage with nothing to do pass a call on without waiting a turn of the event loop.
   */
  peek(orgId: string): T | undefined;
  /** Drops the org's entry here and on every other instance. */
  changed(orgId: string): Promise<void>;
}

export function createPerOrgCache<T>(load: (orgId: string) => Promise<T>, options: { changes: ChangeFeed; ttlMs?: number }): PerOrgCache<T> {
  const ttlMs = options.ttlMs ?? 30_000;
  const entries = new Map<string, { value: Promise<T>; expiresAt: number; loaded?: { value: T } }>();
  options.changes.subscribe((notice) => {
    if (notice.kind === 'all') entries.clear();
    else if (notice.kind === 'org') entries.delete(notice.id);
  });
  return {
    get(orgId) {
      const now = Date.now();
      const entry = entries.get(orgId);
      if (entry && entry.expiresAt > now) return entry.value;
      const value = load(orgId);
      const created: { value: Promise<T>; expiresAt: number; loaded?: { value: T } } = { value, expiresAt: now + ttlMs };
      entries.set(orgId, created);
      value.then(
        (loaded) => {
          created.loaded = { value: loaded };
        },
        // A failed load is not remembered: the next call tries the database again.
        () => {
          if (entries.get(orgId) === created) entries.delete(orgId);
        },
      );
      return value;
    },
    peek(orgId) {
      const entry = entries.get(orgId);
      return entry && entry.expiresAt > Date.now() ? entry.loaded?.value : undefined;
    },
    changed: (orgId) => options.changes.publish({ kind: 'org', id: orgId }),
  };
}

/** The write methods of an org-scoped definition store. */
export interface OrgScopedWrites<Created, Patch, Record> {
  create(input: Created & { orgId: string }): Promise<Record>;
  update(orgId: string, id: string, patch: Patch): Promise<Record | undefined>;
  delete(orgId: string, id: string): Promise<boolean>;
}

/** Wraps a store's writes so each one announces that the org's cached definitions changed. */
export function announceOrgWrites<Created, Patch, Record>(
  store: OrgScopedWrites<Created, Patch, Record>,
  cache: PerOrgCache<unknown>,
): OrgScopedWrites<Created, Patch, Record> {
  return {
    async create(input) {
      const created = await store.create(input);
      await cache.changed(input.orgId);
      return created;
    },
    async update(orgId, id, patch) {
      const updated = await store.update(orgId, id, patch);
      await cache.changed(orgId);
      return updated;
    },
    async delete(orgId, id) {
      const deleted = await store.delete(orgId, id);
      await cache.changed(orgId);
      return deleted;
    },
  };
}
