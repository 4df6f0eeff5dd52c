import type { ChangeFeed } from '../lib/change-feed.js';
import { announceOrgWrites, createPerOrgCache } from '../lib/per-org-cache.js';
import type { ExperimentStore } from './sql-experiment-store.js';

/** Active experiments from memory on the request path; writes announce the change to every instance. */
export function cacheExperimentStore(store: ExperimentStore, changes: ChangeFeed): ExperimentStore {
  const active = createPerOrgCache((orgId) => store.listActive(orgId), { changes });
  return { ...store, ...announceOrgWrites(store, active), listActive: (orgId) => active.get(orgId), peekActive: (orgId) => active.peek(orgId) };
}
