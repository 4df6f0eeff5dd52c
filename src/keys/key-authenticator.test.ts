import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChangeFeed } from '../lib/change-feed.js';
import type { TenancyStore } from '../tenancy/tenancy-store.js';
import { createKeyAuthenticator } from './key-authenticator.js';
import { hashVirtualKey } from './virtual-key-format.js';

const HASH_KEY = Buffer.from('0123456789abcdef0123456789abcdef');
const TOKEN = 'sk-gw-' + 'K'.repeat(40);

/** A store with one key whose status the test flips, counting lookups. */
function fakeStore() {
  const state = { status: 'active', lookups: 0, failing: false };
  const store = {
    async findKeyByHash(hash: string) {
      state.lookups++;
      if (state.failing) throw new Error('database away');
      if (hash !== hashVirtualKey(TOKEN, HASH_KEY)) return undefined;
      return { id: 'key-1', orgId: 'org-1', teamId: null, status: state.status };
    },
    async getOrganization(id: string) {
      return { id };
    },
    async getTeam() {
      return undefined;
    },
    async touchKeys() {},
  } as unknown as TenancyStore;
  return { store, state };
}

/** A shared feed whose notices never arrive: only its version moves (a notice still in flight). */
function silentSharedFeed() {
  const feed = { current: '0', failing: false };
  const changes: ChangeFeed = {
    async publish() {},
    subscribe: () => () => {},
    async close() {},
    async version() {
      if (feed.failing) throw new Error('redis away');
      return feed.current;
    },
  };
  return { changes, feed };
}

test('a cached key is re-read as soon as the shared change version moves, before any notice', async () => {
  const { store, state } = fakeStore();
  const { changes, feed } = silentSharedFeed();
  const keys = createKeyAuthenticator({ store, hashKey: HASH_KEY, changes });
  assert.equal((await keys.authenticate(TOKEN)).key.id, 'key-1');
  await keys.authenticate(TOKEN);
  assert.equal(state.lookups, 1, 'served from memory while nothing changed');
  state.status = 'revoked';
  feed.current = '1';
  await assert.rejects(keys.authenticate(TOKEN), { code: 'invalid_api_key' });
  assert.equal(state.lookups, 2);
});

test('when the version cannot be read, the cache is bypassed (the database answers)', async () => {
  const { store, state } = fakeStore();
  const { changes, feed } = silentSharedFeed();
  const keys = createKeyAuthenticator({ store, hashKey: HASH_KEY, changes });
  await keys.authenticate(TOKEN);
  feed.failing = true;
  state.status = 'revoked';
  await assert.rejects(keys.authenticate(TOKEN), { code: 'invalid_api_key' });
  state.status = 'active';
  state.failing = true;
  await assert.rejects(keys.authenticate(TOKEN), { code: 'service_unavailable' });
});

test('without a shared version (one instance), entries live until a notice or the TTL', async () => {
  const { store, state } = fakeStore();
  const changes: ChangeFeed = { async publish() {}, subscribe: () => () => {}, async close() {} };
  const keys = createKeyAuthenticator({ store, hashKey: HASH_KEY, changes });
  await keys.authenticate(TOKEN);
  state.failing = true;
  assert.equal((await keys.authenticate(TOKEN)).key.id, 'key-1', 'a cached key works while the database is away');
});

test('authenticateEarly: a cached key answers at once and its version check settles alongside', async () => {
  const { store, state } = fakeStore();
  const { changes, feed } = silentSharedFeed();
  const keys = createKeyAuthenticator({ store, hashKey: HASH_KEY, changes });

  const first = await keys.authenticateEarly(TOKEN);
  assert.equal(first.auth.key.id, 'key-1');
  assert.equal(first.current, undefined, 'a fresh load has nothing left to check');

  const cached = await keys.authenticateEarly(TOKEN);
  assert.equal(cached.auth, first.auth);
  assert.equal(await cached.current, true);
  assert.equal(state.lookups, 1);

  state.status = 'revoked';
  feed.current = '1';
  const stale = await keys.authenticateEarly(TOKEN);
  assert.equal(await stale.current, false, 'the version moved: the cached context must not be trusted');
  await assert.rejects(keys.authenticate(TOKEN), { code: 'invalid_api_key' });

  feed.failing = true;
  state.status = 'active';
  await keys.authenticate(TOKEN).catch(() => {});
  const unreadable = await keys.authenticateEarly(TOKEN);
  if (unreadable.current) assert.equal(await unreadable.current, false, 'an unreadable version is never trusted');
});

test('authenticateEarly: without a shared feed there is nothing to confirm', async () => {
  const { store } = fakeStore();
  const changes: ChangeFeed = { async publish() {}, subscribe: () => () => {}, async close() {} };
  const keys = createKeyAuthenticator({ store, hashKey: HASH_KEY, changes });
  await keys.authenticate(TOKEN);
  assert.equal((await keys.authenticateEarly(TOKEN)).current, undefined);
  await assert.rejects(async () => keys.authenticateEarly('sk-gw-unknown'), { code: 'invalid_api_key' });
});

test('a version read that does not answer in time counts as unreadable: the database answers', async () => {
  const { store, state } = fakeStore();
  let hang = false;
  const changes: ChangeFeed = {
    async publish() {},
    subscribe: () => () => {},
    async close() {},
    version: () => (hang ? new Promise<string>(() => {}) : Promise.resolve('0')),
  };
  const keys = createKeyAuthenticator({ store, hashKey: HASH_KEY, changes, versionTimeoutMs: 20 });
  await keys.authenticate(TOKEN);
  hang = true;
  state.status = 'revoked';
  await assert.rejects(keys.authenticate(TOKEN), { code: 'invalid_api_key' });
  assert.equal(state.lookups, 2, 'the cached entry was not trusted');
  const early = await keys.authenticateEarly(TOKEN);
  assert.equal(await early.current, false, 'the early path does not trust the entry either');
});

test('authenticateEarly: with a version the feed confirmed recently, nothing is read per call; a moved version reloads the key at once', async () => {
  const { store, state } = fakeStore();
  const { changes, feed } = silentSharedFeed();
  let confirmed: string | undefined = '0';
  let reads = 0;
  const counting: ChangeFeed = {
    ...changes,
    version: () => {
      reads++;
      return changes.version!();
    },
    confirmedVersion: () => confirmed,
  };
  const keys = createKeyAuthenticator({ store, hashKey: HASH_KEY, changes: counting });
  await keys.authenticate(TOKEN);
  const readsAfterLoad = reads;
  const cached = await keys.authenticateEarly(TOKEN);
  assert.equal(cached.current, undefined, 'confirmed by the feed: nothing left to check');
  assert.equal(reads, readsAfterLoad, 'no version read of its own');
  assert.equal(state.lookups, 1);

  state.status = 'revoked';
  feed.current = '1';
  confirmed = '1';
  await assert.rejects(async () => keys.authenticateEarly(TOKEN), { code: 'invalid_api_key' });
  assert.equal(state.lookups, 2, 'the entry loaded under the older version was not trusted');

  // Not confirmed lately: the call reads the version itself, as without confirmation.
  state.status = 'active';
  feed.current = '2';
  confirmed = undefined;
  await keys.authenticate(TOKEN);
  const unconfirmed = await keys.authenticateEarly(TOKEN);
  assert.equal(await unconfirmed.current, true);
});
