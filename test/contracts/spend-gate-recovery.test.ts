import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { createDatabase } from '../../src/db/create-database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createCounterRepairs } from '../../src/metering/counter-repairs.js';
import { createMemorySpendGate } from '../../src/metering/memory-spend-gate.js';
import { createSettlementRetry } from '../../src/metering/settlement-retry.js';
import { createRedisSpendGate } from '../../src/metering/redis-spend-gate.js';
import { spendAccountsFor } from '../../src/metering/spend-accounts.js';
import type { SpendAccount, SpendGate } from '../../src/metering/spend-gate.js';
import type { SpendLedger } from '../../src/metering/spend-ledger.js';
import { createPeriodClock } from '../../src/metering/spend-periods.js';
import { createSpendSeeder, seedingGate } from '../../src/metering/spend-seeder.js';
import type { AuthContext, Budget } from '../../src/tenancy/tenancy-types.js';
import { TEST_REDIS_URL, testRedisConnections } from '../helpers/test-databases.js';

// How the spend counters come back to what SQL says after they lost track of it: Redis lost its
// data, a hold outlived every sweeper, a budget was removed and set again.

const redisUrl = TEST_REDIS_URL;
const redisConnection = testRedisConnections();

function account(key: string, kind: SpendAccount['kind'], limitNanos: number | null): SpendAccount {
  return { key, kind, limitNanos, expiresAt: 0, orgId: 'o1', ownerId: kind === 'key' ? 'k1' : 'o1', period: 'none', periodStartMs: 0, thresholds: [] };
}

/** A ledger whose totals the test sets: what SQL says was spent and credited. */
function fakeLedger(totals: { spent: number; credited: number }): SpendLedger {
  return {
    record() {},
    history: async () => [],
    spentSince: async () => totals.spent,
    creditedTotal: async () => totals.credited,
    flush: async () => {},
    close: async () => {},
  };
}

describe('spend counters after Redis lost its data', { skip: redisUrl ? false : 'GW_TEST_REDIS_URL is not set' }, () => {
  test('they are seeded again from SQL on first use: credits keep working and budgets keep their spend', async () => {
    const redis = redisConnection();
    const prefix = `gwtest:${randomUUID()}:`;
    const shared = createRedisSpendGate({ redis, prefix, sweepIntervalMs: 0 });
    // SQL: the org spent 900 of 10,000 credited; the key 900 of its 1,000 budget.
    const totals = { spent: 900, credited: 10_000 };
    const seeder = createSpendSeeder({ gate: shared, ledger: fakeLedger(totals) });
    const gate = seedingGate(shared, seeder);
    const credit = account('credit:o1', 'credit', null);
    const budget = account('key:k1:all', 'key', 1_000);
    await seeder.ensure([credit, budget]);
    assert.deepEqual(await gate.reserve('r1', [credit, budget], 200, 60_000), { ok: false, index: 1, availableNanos: 100 });

    // Redis restarts empty, is flushed, or evicts the counters; this instance has not reconnected.
    await redis.del(...(await redis.keys(`${prefix}*`)));
    assert.equal(seeder.ensure([credit, budget]), undefined, 'this instance seeded them already');
    assert.deepEqual(await gate.reserve('r2', [credit, budget], 200, 60_000), { ok: false, index: 1, availableNanos: 100 }, 'the budget still counts the 900');
    assert.deepEqual(await gate.reserve('r3', [credit, budget], 100, 60_000), { ok: true }, 'the credit account has its credited total back');
    assert.deepEqual(await gate.read(credit.key), { spentNanos: 900, reservedNanos: 100, creditedNanos: 10_000 });
    await gate.close();
  });

  test('a settlement or a release on a lost counter does not recreate it without its spend', async () => {
    const redis = redisConnection();
    const prefix = `gwtest:${randomUUID()}:`;
    const shared = createRedisSpendGate({ redis, prefix, sweepIntervalMs: 0 });
    const totals = { spent: 900, credited: 0 };
    const seeder = createSpendSeeder({ gate: shared, ledger: fakeLedger(totals) });
    const gate = seedingGate(shared, seeder);
    const budget = account('key:k1:all', 'key', 1_000);
    await seeder.ensure([budget]);
    assert.deepEqual(await gate.reserve('r1', [budget], 50, 60_000), { ok: true });
    assert.deepEqual(await gate.reserve('r2', [budget], 50, 60_000), { ok: true });
    await redis.del(prefix + budget.key);
    // Calls that were running when it was lost: their costs reach the ledger, not a new counter.
    assert.deepEqual(await gate.settle('r1', [budget], 40), [{ spentNanos: 0, limitNanos: 0 }]);
    await gate.release('r2');
    assert.equal(await redis.exists(prefix + budget.key), 0);
    totals.spent += 40;
    // A new instance (or this one) seeds it from SQL: nothing it found blocks the seeding.
    await createSpendSeeder({ gate: shared, ledger: fakeLedger(totals) }).ensure([budget]);
    assert.deepEqual(await gate.read(budget.key), { spentNanos: 940, reservedNanos: 0, creditedNanos: 0 });
    await gate.close();
  });

  test('a top-up on a lost credit counter is not counted twice', async () => {
    const redis = redisConnection();
    const prefix = `gwtest:${randomUUID()}:`;
    const shared = createRedisSpendGate({ redis, prefix, sweepIntervalMs: 0 });
    const totals = { spent: 0, credited: 1_000 };
    const seeder = createSpendSeeder({ gate: shared, ledger: fakeLedger(totals) });
    const gate = seedingGate(shared, seeder);
    const credit = account('credit:o1', 'credit', null);
    await seeder.ensure([credit]);
    await redis.del(prefix + credit.key);
    // The top-up is in SQL before it reaches the counter (org-credits.ts).
    totals.credited += 500;
    assert.equal(await gate.addCredit(credit.key, 500), 1_500);
    assert.equal((await gate.read(credit.key)).creditedNanos, 1_500);
    await gate.close();
  });

  test('the seeder forgets what it seeded, so a reconnection seeds again', async () => {
    const shared = createMemorySpendGate({ sweepIntervalMs: 0 });
    const seeder = createSpendSeeder({ gate: shared, ledger: fakeLedger({ spent: 0, credited: 0 }) });
    const budget = account('key:k1:all', 'key', 1_000);
    await seeder.ensure([budget]);
    assert.equal(seeder.ensure([budget]), undefined);
    seeder.forget();
    assert.notEqual(seeder.ensure([budget]), undefined);
  });
});

describe('a hold left behind by instances that were all down', { skip: redisUrl ? false : 'GW_TEST_REDIS_URL is not set' }, () => {
  test('keeps what the sweeper needs, however late it runs', async () => {
    const redis = redisConnection();
    const prefix = `gwtest:${randomUUID()}:`;
    const clock = { now: 1_000_000 };
    const gate = createRedisSpendGate({ redis, prefix, sweepIntervalMs: 0, now: () => clock.now });
    const credit = account('credit:o1', 'credit', null);
    await gate.seed(credit, { spentNanos: 0, creditedNanos: 10_000 });
    assert.deepEqual(await gate.reserve('r1', [credit], 4_000, 660_000), { ok: true });
    assert.equal(await redis.pttl(prefix + 'hold:r1'), -1, 'the hold does not expire before a sweeper handled it');
    // Every instance down for a day.
    clock.now += 86_400_000;
    assert.equal(await gate.sweepExpired(), 1);
    assert.deepEqual(await gate.read(credit.key), { spentNanos: 0, reservedNanos: 0, creditedNanos: 10_000 });
    assert.equal(await redis.exists(prefix + 'hold:r1'), 0);
    assert.equal(await redis.zcard(prefix + 'holds'), 0);
    await gate.close();
  });
});

interface Shared {
  name: string;
  skip: string | false;
  gate(): SpendGate;
}

const sharedGates: Shared[] = [
  { name: 'memory', skip: false, gate: () => createMemorySpendGate({ sweepIntervalMs: 0 }) },
  {
    name: 'redis',
    skip: redisUrl ? false : 'GW_TEST_REDIS_URL is not set',
    gate: () => createRedisSpendGate({ redis: redisConnection(), prefix: `gwtest:${randomUUID()}:`, sweepIntervalMs: 0 }),
  },
];

for (const shared of sharedGates) {
  describe(`a budget removed and set again (${shared.name})`, { skip: shared.skip }, () => {
    const auth = (budget: Budget | null, userBudget: Budget | null = null) =>
      ({ org: { id: 'o1', budget: null }, team: null, key: { id: 'k1', budget, userBudget } }) as unknown as AuthContext;
    const budget: Budget = { limitNanos: 1_000, period: 'monthly', thresholds: [] };
    const windowOf = createPeriodClock();

    test('counts the spend made while it was not set (key and per-user budgets)', async () => {
      const raw = shared.gate();
      const totals = { spent: 800, credited: 0 };
      const seeder = createSpendSeeder({ gate: raw, ledger: fakeLedger(totals) });
      const gate = seedingGate(raw, seeder);
      const accounts = spendAccountsFor(auth(budget, budget), 'alice', windowOf, false);
      assert.equal(accounts.length, 2);
      await seeder.ensure(accounts);
      assert.deepEqual(await gate.reserve('r1', accounts, 100, 60_000), { ok: true });
      // Removed: calls carry no budget account, and spend 50 more (the ledger has it).
      assert.equal(spendAccountsFor(auth(null), 'alice', windowOf, false).length, 0);
      await seeder.ownerChanged('key', 'k1');
      totals.spent += 50;
      // Set again, in the same period: the change notice marked the key's counters for seeding
      // again; the per-user budget set again has a generation, so its counter is a new one.
      await seeder.ownerChanged('key', 'k1');
      const again = spendAccountsFor(auth(budget, { ...budget, generation: 1_700_000_000_000 }), 'alice', windowOf, false);
      assert.equal(again[0].key, accounts[0].key);
      assert.notEqual(again[1].key, accounts[1].key);
      await seeder.ensure(again);
      assert.deepEqual(await gate.reserve('r2', again, 100, 60_000), { ok: false, index: 0, availableNanos: 50 }, 'spent 850 (SQL), 100 still held');
      await gate.release('r1');
      assert.deepEqual(await gate.read(again[0].key), { spentNanos: 850, reservedNanos: 0, creditedNanos: 0 });
      assert.deepEqual(await gate.read(again[1].key), { spentNanos: 850, reservedNanos: 0, creditedNanos: 0 });
      await gate.close();
    });

    test('a per-user budget set again is counted afresh by an instance that never saw its old counter', async () => {
      const raw = shared.gate();
      const totals = { spent: 800, credited: 0 };
      // Instance A served alice under the first per-user budget, then went away (what it knew, too).
      const first = spendAccountsFor(auth(null, budget), 'alice', windowOf, false);
      await createSpendSeeder({ gate: raw, ledger: fakeLedger(totals) }).ensure(first);
      // Removed, 150 spent meanwhile, set again: instance B never knew A's counter, so it cannot mark it.
      totals.spent += 150;
      const seeder = createSpendSeeder({ gate: raw, ledger: fakeLedger(totals) });
      await seeder.ownerChanged('key', 'k1');
      const again = spendAccountsFor(auth(null, { ...budget, generation: 1_700_000_000_000 }), 'alice', windowOf, false);
      const gate = seedingGate(raw, seeder);
      await seeder.ensure(again);
      assert.deepEqual(await gate.reserve('r1', again, 100, 60_000), { ok: false, index: 0, availableNanos: 50 }, 'spent 950 of 1,000');
      await gate.close();
    });

    test('an instance that never saw the counter still seeds it again', async () => {
      const raw = shared.gate();
      const totals = { spent: 800, credited: 0 };
      const accounts = spendAccountsFor(auth(budget), undefined, windowOf, false);
      await createSpendSeeder({ gate: raw, ledger: fakeLedger(totals) }).ensure(accounts);
      totals.spent += 150;
      // Spent 950 of 1,000 now. A fresh instance receives the notice of the budget set again, then serves a call.
      const seeder = createSpendSeeder({ gate: raw, ledger: fakeLedger(totals) });
      await seeder.ownerChanged('key', 'k1');
      const gate = seedingGate(raw, seeder);
      await seeder.ensure(accounts);
      assert.deepEqual(await gate.reserve('r1', accounts, 100, 60_000), { ok: false, index: 0, availableNanos: 50 });
      await gate.close();
    });
  });
}

for (const shared of sharedGates) {
  describe(`settlements another instance gave up at shutdown (${shared.name})`, { skip: shared.skip }, () => {
    const account: SpendAccount = {
      key: `credit:o-${randomUUID()}`, kind: 'credit', limitNanos: null, expiresAt: 0, orgId: 'o1', ownerId: 'o1', period: 'none', periodStartMs: 0, thresholds: [],
    };

    test('the counter they missed is seeded again from the ledger once any instance applies the repairs', async () => {
      const database = await createDatabase('sqlite::memory:');
      await migrateToLatest(database.db);
      const raw = shared.gate();
      const totals = { spent: 100, credited: 10_000 };
      const seeder = createSpendSeeder({ gate: raw, ledger: fakeLedger(totals) });
      const gate = seedingGate(raw, seeder);
      await seeder.ensure([account]);
      assert.equal((await gate.read(account.key)).spentNanos, 100);

      // Instance B stops while Redis is away: its settlement of 50 is in the ledger, not the counter.
      totals.spent += 50;
      const stopping = createSettlementRetry({
        gate: { ...raw, settle: () => Promise.reject(new Error('store away')) } as SpendGate,
        intervalMs: 60_000,
        onLost: (lost) => createCounterRepairs({ db: database.db, gate: raw }).record(lost.flatMap((write) => write.accounts.map((each) => each.key))),
      });
      stopping.defer({ kind: 'settle', reservationId: 'gone', accounts: [account], actualNanos: 50 });
      stopping.defer({ kind: 'release', reservationId: 'other' });
      await stopping.close();
      assert.deepEqual((await database.db.selectFrom('spend_counter_repairs').select('account_key').execute()).map((row) => row.account_key), [account.key]);

      // Instance A, still running and unaware, applies the repairs when it next looks.
      const repairs = createCounterRepairs({ db: database.db, gate: raw });
      assert.equal(await repairs.apply(), 1);
      assert.deepEqual(await gate.reserve('r1', [account], 10, 60_000), { ok: true }, 'reseeded on its next use');
      assert.equal((await gate.read(account.key)).spentNanos, 150);
      assert.equal(await repairs.apply(), 0, 'applied once');
      await gate.close();
      await database.close();
    });

    test('a counter recorded again while an older record of it is applied is kept for the next pass', async () => {
      const database = await createDatabase('sqlite::memory:');
      await migrateToLatest(database.db);
      const raw = shared.gate();
      const recorder = createCounterRepairs({ db: database.db, gate: raw });
      await recorder.record([account.key]);
      let unseeds = 0;
      const repairs = createCounterRepairs({
        db: database.db,
        gate: {
          async unseed(keys) {
            unseeds += 1;
            // Another instance loses a settlement on the same counter between this read and its delete.
            if (unseeds === 1) await recorder.record(keys);
            await raw.unseed(keys);
          },
        },
      });
      assert.equal(await repairs.apply(), 1);
      assert.equal(await repairs.apply(), 1, 'the newer record is applied on the next pass');
      assert.equal(await repairs.apply(), 0);
      await raw.close();
      await database.close();
    });
  });
}
