import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { createMemorySpendGate } from '../../src/metering/memory-spend-gate.js';
import { createRedisSpendGate } from '../../src/metering/redis-spend-gate.js';
import { UnseededAccountsError, type SpendAccount, type SpendGate } from '../../src/metering/spend-gate.js';
import { TEST_REDIS_URL, testRedisConnections } from '../helpers/test-databases.js';

const redisUrl = TEST_REDIS_URL;

interface Implementation {
  name: string;
  skip: string | false;
  make(clock: { now: number }): SpendGate;
}

const redisConnection = testRedisConnections();

const implementations: Implementation[] = [
  { name: 'memory', skip: false, make: (clock) => createMemorySpendGate({ now: () => clock.now, sweepIntervalMs: 0 }) },
  {
    name: 'redis',
    skip: redisUrl ? false : 'GW_TEST_REDIS_URL is not set',
    make(clock) {
      return createRedisSpendGate({ redis: redisConnection(), prefix: `gwtest:${randomUUID()}:`, now: () => clock.now, sweepIntervalMs: 0 });
    },
  },
];

function account(key: string, limitNanos: number | null, extra: Partial<SpendAccount> = {}): SpendAccount {
  return {
    key,
    kind: limitNanos === null ? 'credit' : 'key',
    limitNanos,
    expiresAt: 0,
    orgId: 'org',
    ownerId: 'owner',
    period: 'none',
    periodStartMs: 0,
    thresholds: [0.5, 0.8, 1],
    ...extra,
  };
}

/** Fresh counters, seeded as the seeder seeds them: a gate uses no counter that is not. */
const seedAtZero = (gate: SpendGate, accounts: SpendAccount[]) => Promise.all(accounts.map((entry) => gate.seed(entry, { spentNanos: 0 })));

for (const implementation of implementations) {
  describe(`SpendGate contract: ${implementation.name}`, { skip: implementation.skip }, () => {
    test('reserve holds on every account, settle moves the actual amount to spent', async () => {
      const gate = implementation.make({ now: 1000 });
      const credit = account('credit:o1', null);
      const budget = account('key:k1:all', 1_000);
      await seedAtZero(gate, [credit, budget]);
      await gate.addCredit(credit.key, 5_000);
      assert.deepEqual(await gate.reserve('r1', [credit, budget], 600, 60_000), { ok: true });
      assert.deepEqual(await gate.read(credit.key), { spentNanos: 0, reservedNanos: 600, creditedNanos: 5_000 });
      assert.equal((await gate.read(budget.key)).reservedNanos, 600);
      const settled = await gate.settle('r1', [credit, budget], 250);
      assert.deepEqual(settled, [
        { spentNanos: 250, limitNanos: 5_000 },
        { spentNanos: 250, limitNanos: 1_000 },
      ]);
      assert.deepEqual(await gate.read(budget.key), { spentNanos: 250, reservedNanos: 0, creditedNanos: 0 });
      await gate.close();
    });

    test('a reservation no account can refuse is all-or-nothing', async () => {
      const gate = implementation.make({ now: 1000 });
      const roomy = account('key:roomy', 10_000);
      const tight = account('key:tight', 100);
      await seedAtZero(gate, [roomy, tight]);
      const result = await gate.reserve('r1', [roomy, tight], 101, 60_000);
      assert.deepEqual(result, { ok: false, index: 1, availableNanos: 100 });
      assert.equal((await gate.read(roomy.key)).reservedNanos, 0, 'nothing held on the account that could cover it');
      assert.deepEqual(await gate.reserve('r2', [roomy, tight], 100, 60_000), { ok: true });
      await gate.close();
    });

    test('a credit account with no credit refuses; an account at its limit refuses even zero', async () => {
      const gate = implementation.make({ now: 1000 });
      const credit = account('credit:empty', null);
      await seedAtZero(gate, [credit]);
      assert.equal((await gate.reserve('r1', [credit], 1, 60_000)).ok, false);
      const budget = account('key:full', 100);
      await seedAtZero(gate, [budget]);
      assert.equal((await gate.reserve('r2', [budget], 100, 60_000)).ok, true);
      await gate.settle('r2', [budget], 100);
      assert.equal((await gate.reserve('r3', [budget], 0, 60_000)).ok, false);
      await gate.close();
    });

    test('release drops the hold; releasing twice or an unknown id is harmless', async () => {
      const gate = implementation.make({ now: 1000 });
      const budget = account('key:rel', 1_000);
      await seedAtZero(gate, [budget]);
      await gate.reserve('r1', [budget], 700, 60_000);
      assert.equal((await gate.reserve('r2', [budget], 700, 60_000)).ok, false);
      await gate.release('r1');
      await gate.release('r1');
      await gate.release('nope');
      assert.deepEqual(await gate.read(budget.key), { spentNanos: 0, reservedNanos: 0, creditedNanos: 0 });
      assert.equal((await gate.reserve('r2', [budget], 700, 60_000)).ok, true);
      await gate.close();
    });

    test('expired holds are swept; a late settle still records the spend', async () => {
      const clock = { now: 1_000_000 };
      const gate = implementation.make(clock);
      const budget = account('key:sweep', 1_000);
      await seedAtZero(gate, [budget]);
      await gate.reserve('r1', [budget], 400, 5_000);
      await gate.reserve('r2', [budget], 400, 60_000);
      clock.now += 10_000;
      assert.equal(await gate.sweepExpired(), 1);
      assert.equal((await gate.read(budget.key)).reservedNanos, 400);
      await gate.settle('r1', [budget], 300);
      assert.deepEqual(await gate.read(budget.key), { spentNanos: 300, reservedNanos: 400, creditedNanos: 0 });
      await gate.close();
    });

    test('seed sets counters only where none are seeded', async () => {
      const gate = implementation.make({ now: 1000 });
      const credit = account('credit:seed', null);
      await gate.seed(credit, { spentNanos: 300, creditedNanos: 1_000 });
      await gate.seed(credit, { spentNanos: 999, creditedNanos: 9_999 });
      assert.deepEqual(await gate.read(credit.key), { spentNanos: 300, reservedNanos: 0, creditedNanos: 1_000 });
      assert.equal(await gate.addCredit(credit.key, 500), 1_500);
      await gate.close();
    });

    test('an unseeded counter is refused before anything changes; seeding it again replaces spent and keeps what is reserved', async () => {
      const gate = implementation.make({ now: 1000 });
      const credit = account('credit:unseed', null);
      const budget = account('key:unseed:all', 1_000);
      await seedAtZero(gate, [credit, budget]);
      await gate.addCredit(credit.key, 5_000);
      assert.deepEqual(await gate.reserve('r1', [credit, budget], 300, 60_000), { ok: true });
      await gate.settle('r1', [credit, budget], 200);
      assert.deepEqual(await gate.reserve('r2', [credit, budget], 100, 60_000), { ok: true });
      await gate.unseed([budget.key]);
      await assert.rejects(async () => gate.reserve('r3', [credit, budget], 10, 60_000), (error: unknown) => error instanceof UnseededAccountsError && error.accountKeys.join() === budget.key);
      await assert.rejects(gate.claim!('h1', [budget], 10, 10, 4, 60_000), UnseededAccountsError);
      await assert.rejects(gate.read(budget.key), UnseededAccountsError);
      assert.equal((await gate.read(credit.key)).reservedNanos, 100, 'the refused calls held nothing');
      // The ledger says 700 were spent meanwhile: seeding takes it, the running hold (100) stays.
      await gate.seed(budget, { spentNanos: 700 });
      assert.deepEqual(await gate.read(budget.key), { spentNanos: 700, reservedNanos: 100, creditedNanos: 0 });
      assert.deepEqual(await gate.reserve('r4', [credit, budget], 201, 60_000), { ok: false, index: 1, availableNanos: 200 });
      await gate.settle('r2', [credit, budget], 100);
      assert.deepEqual(await gate.read(budget.key), { spentNanos: 800, reservedNanos: 0, creditedNanos: 0 });
      await gate.close();
    });

    test('claimOnce is true once per marker', async () => {
      const gate = implementation.make({ now: 1000 });
      const results = await Promise.all(Array.from({ length: 10 }, () => gate.claimOnce('threshold:x:0.8', 60_000)));
      assert.equal(results.filter(Boolean).length, 1);
      assert.equal(await gate.claimOnce('threshold:x:1', 60_000), true);
      await gate.close();
    });

    test('amounts above 1e14 nanos stay exact', async () => {
      const gate = implementation.make({ now: 1000 });
      const credit = account('credit:big', null);
      await seedAtZero(gate, [credit]);
      await gate.addCredit(credit.key, 8_000_000_000_000_001);
      assert.equal((await gate.reserve('r1', [credit], 123_456_789_012_345, 60_000)).ok, true);
      const [settled] = await gate.settle('r1', [credit], 123_456_789_012_347);
      assert.deepEqual(settled, { spentNanos: 123_456_789_012_347, limitNanos: 8_000_000_000_000_001 });
      await gate.close();
    });

    test('claim: holds the least of the wanted amount and 1/share of the poorest account, never less than the minimum', async () => {
      const gate = implementation.make({ now: 1000 });
      const credit = account('credit:claim', null);
      const budget = account('key:claim', 64_000);
      await seedAtZero(gate, [credit, budget]);
      await gate.addCredit(credit.key, 1_000_000);
      // The budget is the poorer: 64,000 / 32 = 2,000, below the 10 × 500 wanted.
      assert.deepEqual(await gate.claim!('h1', [credit, budget], 500, 5_000, 32, 60_000), { ok: true, grantedNanos: 2_000 });
      assert.equal((await gate.read(budget.key)).reservedNanos, 2_000);
      assert.equal((await gate.read(credit.key)).reservedNanos, 2_000);
      // Wanted below the share: the wanted amount.
      assert.deepEqual(await gate.claim!('h2', [credit], 100, 300, 32, 60_000), { ok: true, grantedNanos: 300 });
      // Near the end of the budget (62,000 left, 1/32 below the minimum): exactly the minimum.
      assert.deepEqual(await gate.claim!('h3', [credit, budget], 30_000, 90_000, 32, 60_000), { ok: true, grantedNanos: 30_000 });
      // 32,000 left: a minimum above it is refused as reserve refuses, naming the account.
      assert.deepEqual(await gate.claim!('h4', [credit, budget], 40_000, 40_000, 32, 60_000), { ok: false, index: 1, availableNanos: 32_000 });
      await gate.release('h3');
      assert.equal((await gate.read(budget.key)).reservedNanos, 2_000);
      await gate.close();
    });

    test('draw: one call out of a claim turns its part into spend, once per draw id; the rest is released with the claim', async () => {
      const gate = implementation.make({ now: 1000 });
      const budget = account('key:draw', 1_000_000);
      await seedAtZero(gate, [budget]);
      assert.deepEqual(await gate.claim!('h1', [budget], 1_000, 4_000, 32, 60_000), { ok: true, grantedNanos: 4_000 });
      assert.deepEqual(await gate.draw!('h1', 'call-1', [budget], 1_000, 700), [{ spentNanos: 700, limitNanos: 1_000_000 }]);
      assert.deepEqual(await gate.read(budget.key), { spentNanos: 700, reservedNanos: 3_000, creditedNanos: 0 });
      assert.deepEqual(await gate.draw!('h1', 'call-1', [budget], 1_000, 700), [], 'a replay is not counted again');
      assert.deepEqual(await gate.draw!('h1', 'call-2', [budget], 1_000, 1_000, { onlyIfHeld: true }), [{ spentNanos: 1_700, limitNanos: 1_000_000 }]);
      await gate.release('h1');
      assert.deepEqual(await gate.read(budget.key), { spentNanos: 1_700, reservedNanos: 0, creditedNanos: 0 });
      // The claim is gone: a replay that must find it does nothing, a first settlement still counts its spend.
      assert.deepEqual(await gate.draw!('h1', 'call-3', [budget], 1_000, 500, { onlyIfHeld: true }), []);
      assert.deepEqual(await gate.draw!('h1', 'call-4', [budget], 1_000, 500), [{ spentNanos: 2_200, limitNanos: 1_000_000 }]);
      assert.equal((await gate.read(budget.key)).reservedNanos, 0);
      await gate.close();
    });

    test('concurrency: 60 parallel reservations against a budget for exactly 7 let exactly 7 through', async () => {
      const gate = implementation.make({ now: 1000 });
      const credit = account('credit:conc', null);
      const budget = account('key:conc', 7 * 1_000);
      await seedAtZero(gate, [credit, budget]);
      await gate.addCredit(credit.key, 1_000_000);
      const outcomes = await Promise.all(
        Array.from({ length: 60 }, async (_, index) => {
          const id = `c${index}`;
          const reserved = await gate.reserve(id, [credit, budget], 1_000, 60_000);
          if (!reserved.ok) return 0;
          // Settle at a cost a little below the hold, as real calls do.
          const actual = 900 + index;
          await gate.settle(id, [credit, budget], actual);
          return actual;
        }),
      );
      const admitted = outcomes.filter((cost) => cost > 0);
      assert.equal(admitted.length, 7);
      const total = admitted.reduce((sum, cost) => sum + cost, 0);
      assert.deepEqual(await gate.read(budget.key), { spentNanos: total, reservedNanos: 0, creditedNanos: 0 });
      assert.equal((await gate.read(credit.key)).spentNanos, total);
      await gate.close();
    });
  });
}
