import type { ChangeFeed } from '../lib/change-feed.js';
import { createPerOrgCache } from '../lib/per-org-cache.js';
import type { GuardrailStore } from './sql-guardrail-store.js';

/** The org's guardrail list from memory on the request path; writes announce the change to every instance. */
export function cacheGuardrailStore(store: GuardrailStore, changes: ChangeFeed): GuardrailStore {
  const lists = createPerOrgCache((orgId) => store.list(orgId), { changes });
  return {
    ...store,
    list: (orgId) => lists.get(orgId),
    async create(input) {
      const created = await store.create(input);
      await lists.changed(input.orgId);
      return created;
    },
    async update(orgId, id, patch) {
      const updated = await store.update(orgId, id, patch);
      await lists.changed(orgId);
      return updated;
    },
    async delete(orgId, id) {
      const deleted = await store.delete(orgId, id);
      await lists.changed(orgId);
      return deleted;
    },
  };
}
