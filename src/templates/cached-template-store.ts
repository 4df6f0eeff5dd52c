import type { ChangeFeed } from '../lib/change-feed.js';
import type { TemplateStore } from './sql-template-store.js';

const TTL_MS = 30_000;

/**
 * Template versions from memory on the request path (an org's default template applies to every
 * chat call). Versions are immutable, and "latest" changes only when a version is added: writes
 * announce an `{kind:'org'}` change, which drops that org's entries on every instance.
 */
export function cacheTemplateStore(store: TemplateStore, changes: ChangeFeed): TemplateStore {
  const entries = new Map<string, { orgId: string; value: ReturnType<TemplateStore['getVersion']>; expiresAt: number }>();
  changes.subscribe((notice) => {
    if (notice.kind === 'all') entries.clear();
    else if (notice.kind === 'org') for (const [key, entry] of entries) if (entry.orgId === notice.id) entries.delete(key);
  });
  const changed = (orgId: string) => changes.publish({ kind: 'org', id: orgId });
  return {
    ...store,
    getVersion(orgId, id, version) {
      const key = `${orgId}|${id}|${version ?? 'latest'}`;
      const now = Date.now();
      const entry = entries.get(key);
      if (entry && entry.expiresAt > now) return entry.value;
      const value = store.getVersion(orgId, id, version);
      if (entries.size >= 10_000) entries.clear();
      entries.set(key, { orgId, value, expiresAt: now + TTL_MS });
      value.catch(() => entries.delete(key));
      return value;
    },
    async create(input) {
      const created = await store.create(input);
      await changed(input.orgId);
      return created;
    },
    async addVersion(orgId, id, input) {
      const added = await store.addVersion(orgId, id, input);
      await changed(orgId);
      return added;
    },
  };
}
