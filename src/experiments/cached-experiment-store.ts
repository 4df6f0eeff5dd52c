import type { ChangeFeed } from '../lib/change-feed.js';
import { createPerOrgCache } from '../lib/per-org-cache.js';
import type { ExperimentStore } from './sql-experiment-store.js';

/** Active experiments from memory on the request path; writes announce the change to every instance. */
export function cacheExperimentStore(store: ExperimentStore, changes: ChangeFeed): ExperimentStore {
  const active = createPerOrgCache((orgId) => store.listActive(orgId), { changes });
  return {
    ...store,
    listActive: (orgId) => active.get(orgId),
    async create(input) {
      const created = await store.create(input);
      await active.changed(input.orgId);
      return created;
    },
    async update(orgId, id, patch) {
      const updated = await store.update(orgId, id, patch);
      await active.changed(orgId);
      return updated;
    },
    async delete(orgId, id) {
      const deleted = await store.delete(orgId, id);
      await active.changed(orgId);
      return deleted;
    },
  };
}
