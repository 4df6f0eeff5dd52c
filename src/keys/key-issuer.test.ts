import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChangeFeed, ChangeNotice } from '../lib/change-feed.js';
import { createEventBus } from '../lib/event-bus.js';
import type { TenancyStore } from '../tenancy/tenancy-store.js';
import type { VirtualKey } from '../tenancy/tenancy-types.js';
import { createKeyIssuer } from './key-issuer.js';

test('revoking again announces the revocation again (a retry after a failed notice), with one event', async () => {
  const key = { id: 'k1', orgId: 'o1', name: 'n', alias: 'sk-...x', status: 'active' } as VirtualKey;
  const store = {
    async revokeKey() {
      const revokedNow = key.status === 'active';
      key.status = 'revoked';
      return { key: { ...key }, revokedNow };
    },
  } as unknown as TenancyStore;
  const notices: ChangeNotice[] = [];
  let failNext = true;
  const changes: ChangeFeed = {
    async publish(notice) {
      if (failNext) {
        failNext = false;
        throw new Error('Redis away');
      }
      notices.push(notice);
    },
    subscribe: () => () => {},
    close: async () => {},
  };
  const events = createEventBus();
  const raised: string[] = [];
  events.subscribe((event) => raised.push(event.kind));
  const issuer = createKeyIssuer({ store, hashKey: Buffer.alloc(32), changes, events });
  await assert.rejects(issuer.revoke('k1'), /Redis away/);
  assert.equal((await issuer.revoke('k1')).status, 'revoked');
  assert.deepEqual(notices, [{ kind: 'key', id: 'k1' }]);
  assert.deepEqual(raised, ['key.revoked'], 'one event, raised although the first notice failed');
  await issuer.revoke('k1');
  assert.equal(notices.length, 2);
  assert.deepEqual(raised, ['key.revoked']);
});
