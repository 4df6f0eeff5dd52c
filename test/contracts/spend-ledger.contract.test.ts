import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createDatabase, type DatabaseHandle } from '../../src/db/create-database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createSqlSpendLedger, type SpendEntry, type SpendScope } from '../../src/metering/spend-ledger.js';
import { TEST_DATABASES, type TestDatabase } from '../helpers/test-databases.js';

// The spend ledger's sums, as the spend counters are seeded from them: from a day boundary they come
// from the daily rollup kept by a trigger, from any other time from the ledger rows. Both must be
// the exact sum of what was recorded, through each way batches reach the database.

const DAY_MS = 86_400_000;
const DAY0 = Date.UTC(2026, 10, 20);

interface Setup {
  name: string;
  database: TestDatabase;
  writer: 'inline' | 'thread' | undefined;
}

const setups: Setup[] = TEST_DATABASES.flatMap((database): Setup[] =>
  database.name === 'sqlite'
    ? [
        { name: 'sqlite, writes on the main thread', database, writer: 'inline' },
        { name: 'sqlite, writes on the writer thread', database, writer: 'thread' },
      ]
    : [{ name: 'postgres', database, writer: undefined }],
);

const opened: DatabaseHandle[] = [];
after(async () => {
  for (const handle of opened) await handle.close();
});

async function open(setup: Setup): Promise<DatabaseHandle> {
  const handle = await createDatabase(await setup.database.create(), { sqliteWriter: setup.writer });
  opened.push(handle);
  await migrateToLatest(handle.db);
  return handle;
}

let nextRequest = 0;
function entry(fields: Partial<SpendEntry> & Pick<SpendEntry, 'orgId' | 'keyId' | 'costNanos' | 'createdAt'>): SpendEntry {
  return {
    requestId: `req-${nextRequest++}`,
    keyAlias: 'alias',
    teamId: null,
    user: null,
    model: 'gpt-4o-mini',
    operation: 'chat',
    units: { inputTokens: 10, outputTokens: 5 },
    unpriced: false,
    ...fields,
  };
}

/** Three days of calls: two orgs, a key in a team, a key without, calls with and without `user`. */
function sampleEntries(): SpendEntry[] {
  const entries: SpendEntry[] = [];
  for (let day = 0; day < 3; day++) {
    for (let hour = 0; hour < 24; hour += 5) {
      const createdAt = DAY0 + day * DAY_MS + hour * 3_600_000 + 17;
      entries.push(entry({ orgId: 'org-a', keyId: 'key-1', teamId: 'team-1', costNanos: 1_000_003 + hour, createdAt }));
      entries.push(entry({ orgId: 'org-a', keyId: 'key-1', teamId: 'team-1', user: 'ann', costNanos: 20_011, createdAt }));
      entries.push(entry({ orgId: 'org-a', keyId: 'key-2', user: 'bob', costNanos: 333, createdAt: createdAt + 1 }));
      entries.push(entry({ orgId: 'org-b', keyId: 'key-3', user: 'ann', costNanos: 7, createdAt }));
    }
  }
  // The last millisecond of a day and the first of the next.
  entries.push(entry({ orgId: 'org-a', keyId: 'key-1', costNanos: 900, createdAt: DAY0 + DAY_MS - 1 }));
  entries.push(entry({ orgId: 'org-a', keyId: 'key-1', costNanos: 800, createdAt: DAY0 + DAY_MS }));
  return entries;
}

function expectedSpend(entries: SpendEntry[], scope: SpendScope, sinceMs: number): number {
  return entries
    .filter((each) => each.createdAt >= sinceMs)
    .filter((each) =>
      'orgId' in scope
        ? each.orgId === scope.orgId
        : 'teamId' in scope
          ? each.teamId === scope.teamId
          : each.keyId === scope.keyId && (scope.user === undefined || each.user === scope.user),
    )
    .reduce((sum, each) => sum + each.costNanos, 0);
}

const SCOPES: SpendScope[] = [
  { orgId: 'org-a' },
  { orgId: 'org-b' },
  { orgId: 'org-none' },
  { teamId: 'team-1' },
  { keyId: 'key-1' },
  { keyId: 'key-1', user: 'ann' },
  { keyId: 'key-2' },
  { keyId: 'key-2', user: 'bob' },
  { keyId: 'key-2', user: 'ann' },
  { keyId: 'key-3', user: 'ann' },
];
// Day boundaries (the rollup) and times within a day (the ledger rows).
const SINCE = [0, DAY0, DAY0 + DAY_MS, DAY0 + 2 * DAY_MS, DAY0 + 3 * DAY_MS, DAY0 + DAY_MS - 1, DAY0 + DAY_MS + 3 * 3_600_000];

async function assertSums(ledger: ReturnType<typeof createSqlSpendLedger>, entries: SpendEntry[]): Promise<void> {
  for (const scope of SCOPES) {
    for (const since of SINCE) {
      assert.equal(await ledger.spentSince(scope, since), expectedSpend(entries, scope, since), `${JSON.stringify(scope)} since ${since}`);
    }
  }
}

for (const setup of setups) {
  describe(`spend ledger sums: ${setup.name}`, { skip: setup.database.skip }, () => {
    test('the sum from a day boundary (daily rollup) and from any other time (ledger) are exact for every scope', async () => {
      const handle = await open(setup);
      const ledger = createSqlSpendLedger({ db: handle.db, bulkInsert: handle.bulkInsert, intervalMs: 60_000, batchSize: 40 });
      const entries = sampleEntries();
      for (const each of entries) ledger.record(each);
      await ledger.flush();
      await assertSums(ledger, entries);
      const rollupRows = await handle.db.selectFrom('spend_daily').select(sql<number>`count(*)`.as('rows')).executeTakeFirstOrThrow();
      assert.ok(Number(rollupRows.rows) < entries.length / 2, 'the rollup holds a row per account and day, not per call');
      await ledger.close();
    });

    test('an entry written again (a retried batch) is counted once, in a later batch or the same one', async () => {
      const handle = await open(setup);
      const ledger = createSqlSpendLedger({ db: handle.db, bulkInsert: handle.bulkInsert, intervalMs: 60_000, batchSize: 100 });
      const first = entry({ orgId: 'org-r', keyId: 'key-r', user: 'ann', teamId: 'team-r', costNanos: 5_000, createdAt: DAY0 + 10 });
      ledger.record(first);
      await ledger.flush();
      ledger.record(first);
      ledger.record({ ...first, costNanos: 9_999 });
      const second = entry({ orgId: 'org-r', keyId: 'key-r', costNanos: 70, createdAt: DAY0 + 20 });
      ledger.record(second);
      ledger.record(second);
      await ledger.flush();
      for (const scope of [{ orgId: 'org-r' }, { keyId: 'key-r' }] as SpendScope[]) {
        assert.equal(await ledger.spentSince(scope, 0), 5_070, JSON.stringify(scope));
        assert.equal(await ledger.spentSince(scope, DAY0 + 1), 5_070, `${JSON.stringify(scope)} (ledger rows)`);
      }
      assert.equal(await ledger.spentSince({ teamId: 'team-r' }, DAY0), 5_000);
      assert.equal(await ledger.spentSince({ keyId: 'key-r', user: 'ann' }, DAY0), 5_000);
      await ledger.close();
    });

    test('ledger rows written before the upgrade are summed into the rollup by the migration', async () => {
      const handle = await open(setup);
      // Back to the schema before the rollup existed.
      await sql`drop trigger if exists spend_daily_rollup ${sql.raw(setup.database.name === 'postgres' ? 'on spend_ledger' : '')}`.execute(handle.db);
      if (setup.database.name === 'postgres') await sql`drop function gw_spend_daily_rollup()`.execute(handle.db);
      await handle.db.schema.dropTable('spend_daily').execute();
      await handle.db.deleteFrom('gw_migrations' as never).where('name' as never, '=', '008-spend-daily' as never).execute();
      const before = createSqlSpendLedger({ db: handle.db, bulkInsert: handle.bulkInsert, intervalMs: 60_000, batchSize: 1_000 });
      const old = sampleEntries();
      for (const each of old) before.record(each);
      await before.close();

      assert.deepEqual(await migrateToLatest(handle.db), ['008-spend-daily']);
      const ledger = createSqlSpendLedger({ db: handle.db, bulkInsert: handle.bulkInsert, intervalMs: 60_000, batchSize: 1_000 });
      await assertSums(ledger, old);
      const later = [entry({ orgId: 'org-a', keyId: 'key-1', teamId: 'team-1', user: 'ann', costNanos: 123_456, createdAt: DAY0 + 2 * DAY_MS + 5 })];
      for (const each of later) ledger.record(each);
      await ledger.flush();
      await assertSums(ledger, [...old, ...later]);
      await ledger.close();
    });
  });
}
