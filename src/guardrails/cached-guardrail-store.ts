import type { ChangeFeed } from '../lib/change-feed.js';
import { announceOrgWrites, createPerOrgCache } from '../lib/per-org-cache.js';
import type { GuardrailStore } from './sql-guardrail-store.js';

/** The org's guardrail list from memory on the request path; writes announce the change to every instance. */
export function cacheGuardrailStore(store: GuardrailStore, changes: ChangeFeed): GuardrailStore {
  const lists = createPerOrgCache((orgId) => store.list(orgId), { changes });
  return { ...store, ...announceOrgWrites(store, lists), list: (orgId) => lists.get(orgId), peekList: (orgId) => lists.peek(orgId) };
}
