import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TEST_DATABASES } from '../../test/helpers/test-databases.js';
import { createDatabase, type DatabaseHandle } from '../db/create-database.js';
import { migrateToLatest } from '../db/migrate.js';
import { createKeyIssuer } from '../keys/key-issuer.js';
import { createLocalChangeFeed } from '../lib/change-feed.js';
import { createEventBus } from '../lib/event-bus.js';
import { createSqlTenancyStore } from '../tenancy/tenancy-store.js';
import { bootstrapFirstStart } from './bootstrap-first-start.js';

for (const database of TEST_DATABASES) {
  describe(`first-start bootstrap on ${database.name}`, { skip: database.skip }, () => {
    test('two instances starting together on an empty database bootstrap once; both start', async () => {
      const url = await database.create();
      const handles: DatabaseHandle[] = [await createDatabase(url), await createDatabase(url)];
      try {
        await migrateToLatest(handles[0].db);
        const creditedOrgs: string[] = [];
        // Both instances find the database empty before either creates anything (the race of two starts).
        let arrived = 0;
        let bothArrived: () => void = () => {};
        const barrier = new Promise<void>((resolve) => (bothArrived = resolve));
        const start = (handle: DatabaseHandle) => {
          const sqlStore = createSqlTenancyStore(handle.db);
          let firstLook = true;
          const store = {
            ...sqlStore,
            async listOrganizations() {
              const orgs = await sqlStore.listOrganizations();
              if (firstLook) {
                firstLook = false;
                if (++arrived === 2) bothArrived();
                await barrier;
              }
              return orgs;
            },
          };
          const issuer = createKeyIssuer({ store, hashKey: Buffer.alloc(32, 1), changes: createLocalChangeFeed(), events: createEventBus() });
          return bootstrapFirstStart({
            db: handle.db,
            store,
            issuer,
            generatedMasterKey: undefined,
            // A fixed key (GW_BOOTSTRAP_API_KEY): a second bootstrap would break the key_hash unique index.
            apiKey: 'sk-gw-bootstrap-fixed-key-0123456789abcdef',
            onOrgCreated: async (orgId) => void creditedOrgs.push(orgId),
          });
        };
        const results = await Promise.all(handles.map(start));
        const orgs = await createSqlTenancyStore(handles[0].db).listOrganizations();
        assert.deepEqual(orgs.map((org) => org.name), ['default']);
        assert.deepEqual(creditedOrgs, [orgs[0].id], 'first-start credit granted once');
        assert.equal(results.filter((result) => result.firstKey !== undefined).length, 1, 'one key printed');
        // A later start finds the org at once.
        assert.deepEqual(await bootstrapFirstStart({ db: handles[1].db, store: createSqlTenancyStore(handles[1].db), issuer: undefined as never, generatedMasterKey: undefined }), {
          masterKey: undefined,
        });
      } finally {
        for (const handle of handles) await handle.close();
      }
    });
  });
}
