import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TEST_DATABASES } from '../../test/helpers/test-databases.js';
import { createDatabase, type DatabaseHandle } from './create-database.js';
import { migrateToLatest } from './migrate.js';

/** What a newer version leaves behind: a migration this build has never heard of. */
async function recordNewerMigration(handle: DatabaseHandle, name: string): Promise<void> {
  await handle.db
    .insertInto('gw_migrations' as never)
    .values({ name, timestamp: new Date().toISOString() } as never)
    .execute();
}

for (const database of TEST_DATABASES) {
  describe(`migrations on ${database.name}`, { skip: database.skip }, () => {
    test('the previous version starts on a database a newer version has migrated, without migrating', async () => {
      const handle = await createDatabase(await database.create());
      try {
        assert.ok((await migrateToLatest(handle.db)).includes('001-core'), 'an empty database is migrated');
        await recordNewerMigration(handle, '999-from-a-newer-version');
        const told: string[][] = [];
        assert.deepEqual(await migrateToLatest(handle.db, { onSchemaAhead: (unknown) => told.push(unknown) }), []);
        assert.deepEqual(told, [['999-from-a-newer-version']]);
      } finally {
        await handle.close();
      }
    });

    test('a database that lacks one of this version’s migrations but has unknown ones is refused', async () => {
      const handle = await createDatabase(await database.create());
      try {
        const applied = await migrateToLatest(handle.db);
        await recordNewerMigration(handle, '999-from-a-newer-version');
        await handle.db.deleteFrom('gw_migrations' as never).where('name' as never, '=', applied.at(-1) as never).execute();
        await assert.rejects(migrateToLatest(handle.db), new RegExp(`lacks some of its own \\(${applied.at(-1)}\\)`));
      } finally {
        await handle.close();
      }
    });

    test('an up-to-date database is left as it is', async () => {
      const handle = await createDatabase(await database.create());
      try {
        await migrateToLatest(handle.db);
        let told = false;
        assert.deepEqual(await migrateToLatest(handle.db, { onSchemaAhead: () => (told = true) }), []);
        assert.equal(told, false);
      } finally {
        await handle.close();
      }
    });
  });
}

describe('migrations on one new SQLite file from two processes at once', () => {
  test('both start: the one that finds the other migrating looks again instead of failing', async () => {
    const url = await TEST_DATABASES[0].create();
    const first = await createDatabase(url);
    const second = await createDatabase(url);
    try {
      const [appliedByFirst, appliedBySecond] = await Promise.all([migrateToLatest(first.db), migrateToLatest(second.db)]);
      const all = new Set([...appliedByFirst, ...appliedBySecond]);
      assert.ok(all.has('001-core'), 'the schema was created');
      assert.deepEqual(await migrateToLatest(first.db), [], 'nothing left to apply');
    } finally {
      await first.close();
      await second.close();
    }
  });
});
