import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLocalChangeFeed } from './change-feed.js';
import { createPerOrgCache } from './per-org-cache.js';

test('peek answers only for a loaded, fresh entry, and a change notice takes it away', async () => {
  const changes = createLocalChangeFeed();
  let loads = 0;
  const cache = createPerOrgCache(async (orgId) => {
    loads++;
    return [`${orgId}-definition`];
  }, { changes });
  assert.equal(cache.peek('org-a'), undefined, 'nothing before the first load');
  const loading = cache.get('org-a');
  assert.equal(cache.peek('org-a'), undefined, 'nothing while the load is pending');
  assert.deepEqual(await loading, ['org-a-definition']);
  assert.deepEqual(cache.peek('org-a'), ['org-a-definition']);
  await cache.changed('org-a');
  assert.equal(cache.peek('org-a'), undefined, 'a change drops the entry');
  await cache.get('org-a');
  assert.equal(loads, 2);
});

test('peek never serves an entry past its TTL, nor one whose load failed', async () => {
  const changes = createLocalChangeFeed();
  const cache = createPerOrgCache(async () => ['definition'], { changes, ttlMs: 1 });
  await cache.get('org-a');
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(cache.peek('org-a'), undefined);
  const failing = createPerOrgCache<string[]>(async () => {
    throw new Error('database away');
  }, { changes });
  await assert.rejects(failing.get('org-b'));
  assert.equal(failing.peek('org-b'), undefined);
});
