import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { createAllowanceSpendGate } from '../../src/metering/allowance-spend-gate.js';
import { createMemorySpendGate } from '../../src/metering/memory-spend-gate.js';
import { createRedisSpendGate } from '../../src/metering/redis-spend-gate.js';
import type { SpendAccount, SpendGate } from '../../src/metering/spend-gate.js';
import { createAllowanceCounterStore } from '../../src/ratelimit/allowance-counter-store.js';
import type { CounterStore, WindowLimit } from '../../src/ratelimit/counter-store.js';
import { createMemoryCounterStore } from '../../src/ratelimit/memory-counter-store.js';
import { CALLER_CLOCK, createRedisClock } from '../../src/ratelimit/redis-clock.js';
import { createRedisCounterStore } from '../../src/ratelimit/redis-counter-store.js';
import { TEST_REDIS_URL, testRedisConnections } from '../helpers/test-databases.js';

// Several instances' allowances on one shared store (in memory, or Redis when GW_TEST_REDIS_URL is
// set): limits and budgets hold exactly across instances, and nothing claimed is kept for good.

const redisUrl = TEST_REDIS_URL;
const redisConnection = testRedisConnections();

interface Shared {
  name: string;
  skip: string | false;
  gate(): SpendGate;
  counters(): CounterStore;
}

const sharedStores: Shared[] = [
  {
    name: 'memory',
    skip: false,
    gate: () => createMemorySpendGate({ sweepIntervalMs: 0 }),
    counters: () => createMemoryCounterStore({ sweepIntervalMs: 0 }),
  },
  {
    name: 'redis',
    skip: redisUrl ? false : 'GW_TEST_REDIS_URL is not set',
    gate: () => createRedisSpendGate({ redis: redisConnection(), prefix: `gwtest:${randomUUID()}:`, sweepIntervalMs: 0 }),
    // Fixed instants: windows by the caller's clock (Redis time is tested at the end).
    counters: () => createRedisCounterStore({ redis: redisConnection(), prefix: `gwtest:${randomUUID()}:`, clock: CALLER_CLOCK }),
  },
];

function account(key: string, limitNanos: number | null): SpendAccount {
  return { key, kind: limitNanos === null ? 'credit' : 'key', limitNanos, expiresAt: 0, orgId: 'org', ownerId: 'owner', period: 'none', periodStartMs: 0, thresholds: [] };
}

/** Fresh counters, seeded as the seeder seeds them (a shared gate uses no counter that is not). */
const seedAtZero = (gate: SpendGate, accounts: SpendAccount[]) => Promise.all(accounts.map((entry) => gate.seed(entry, { spentNanos: 0 })));

/** An allowance gate over `store` that counts the claims and the single-call holds it asks the store for. */
function countingAllowanceGate(store: SpendGate, share: number) {
  const asked = { claims: 0, reserves: 0 };
  const claim = store.claim!.bind(store);
  const reserve = store.reserve.bind(store);
  const counted: SpendGate = {
    ...store,
    claim: (...args) => (asked.claims++, claim(...args)),
    reserve: (...args) => (asked.reserves++, reserve(...args)),
  };
  return { gate: createAllowanceSpendGate(counted, { share, sweepIntervalMs: 0 }), asked };
}

/** `count` calls of 1,000 nano-USD each on `accounts` at once, as the calls of a stall arrive. */
const burstOfCalls = (gate: SpendGate, prefix: string, accounts: SpendAccount[], count: number) =>
  Promise.all(Array.from({ length: count }, (_, index) => gate.reserve(`${prefix}-${index}`, accounts, 1_000, 60_000)));

// The start of a minute, so window arithmetic stays simple.
const T0 = 1_700_000_040_000;
const rpm = (max: number, amount = 1): WindowLimit => ({ key: 'rpm:k1', limit: max, windowMs: 60_000, amount });

for (const shared of sharedStores) {
  describe(`allowances over a ${shared.name} store`, { skip: shared.skip }, () => {
    test('credit: two instances carving calls out of their claims spend a budget exactly, and give back what they hold', async () => {
      const store = shared.gate();
      const clock = { now: 0 };
      const instances = [0, 1].map(() => createAllowanceSpendGate(store, { share: 8, sweepIntervalMs: 0, now: () => clock.now }));
      const credit = account('credit:o1', null);
      const budget = account('key:k1:all', 100 * 1_000);
      await seedAtZero(store, [credit, budget]);
      await store.addCredit(credit.key, 10_000_000);
      let admitted = 0;
      let carvedLocally = 0;
      const runUntilRefused = async () => {
        let refusedInARow = 0;
        for (let call = 0; refusedInARow < 2; call++) {
          const gate = instances[call % 2];
          const id = `call-${admitted}-${call}-${clock.now}`;
          const local = gate.reserveFromAllowance(id, [credit, budget], 1_000);
          const held = local || (await gate.reserve(id, [credit, budget], 1_000, 60_000)).ok;
          if (!held) {
            refusedInARow++;
            continue;
          }
          refusedInARow = 0;
          admitted++;
          if (local) carvedLocally++;
          await gate.settle(id, [credit, budget], 1_000);
          clock.now += 10;
        }
      };
      await runUntilRefused();
      assert.ok(carvedLocally > admitted / 2, `most calls were held without asking the shared store (${carvedLocally} of ${admitted})`);
      // Whatever one instance still holds is given back once idle; the other may then use it.
      clock.now += 5_000;
      await Promise.all(instances.map((gate) => gate.sweepIdle()));
      await runUntilRefused();
      assert.equal(admitted, 100, 'every call the budget covers was admitted');
      clock.now += 5_000;
      await Promise.all(instances.map((gate) => gate.sweepIdle()));
      assert.deepEqual(await store.read(budget.key), { spentNanos: 100_000, reservedNanos: 0, creditedNanos: 0 });
      assert.equal((await store.read(credit.key)).reservedNanos, 0);
    });

    test('credit: a released call goes back into its claim; a settled one is drawn at its actual cost', async () => {
      const store = shared.gate();
      const gate = createAllowanceSpendGate(store, { share: 4, sweepIntervalMs: 0 });
      const budget = account('key:k2:all', 1_000_000);
      await seedAtZero(store, [budget]);
      assert.deepEqual(await gate.reserve('a', [budget], 1_000, 60_000), { ok: true });
      // 4 calls' worth claimed (1/4 of 1,000,000 is more).
      assert.equal((await store.read(budget.key)).reservedNanos, 4_000);
      assert.equal(gate.reserveFromAllowance('b', [budget], 2_000), true);
      assert.equal(gate.reserveFromAllowance('c', [budget], 2_000), false, 'only 1,000 left in the claim');
      await gate.release('b');
      assert.equal(gate.reserveFromAllowance('c', [budget], 2_000), true);
      const [settled] = await gate.settle('a', [budget], 400);
      assert.deepEqual(settled, { spentNanos: 400, limitNanos: 1_000_000 });
      assert.deepEqual(await store.read(budget.key), { spentNanos: 400, reservedNanos: 3_000, creditedNanos: 0 });
      await gate.settle('c', [budget], 2_000);
      await gate.close();
      assert.deepEqual(await store.read(budget.key), { spentNanos: 2_400, reservedNanos: 0, creditedNanos: 0 });
    });

    test('a burst of first calls makes one claim (credit) and one slice claim (rate limits), not one each', async () => {
      const store = shared.gate();
      const { gate, asked } = countingAllowanceGate(store, 32);
      const budget = account('key:burst:all', 1_000_000_000);
      await seedAtZero(store, [budget]);
      const held = await burstOfCalls(gate, 'burst', [budget], 20);
      assert.ok(held.every((result) => result.ok));
      assert.equal(asked.claims, 1);
      assert.equal((await store.read(budget.key)).reservedNanos, 32_000);

      const counters = shared.counters();
      let hits = 0;
      const counted: CounterStore = { ...counters, hit: (limits, now) => (hits++, counters.hit(limits, now)) };
      const limits = createAllowanceCounterStore(counted, { share: 32 });
      const results = await Promise.all(Array.from({ length: 20 }, (_, index) => limits.hit([rpm(3_200)], T0 + index)));
      assert.ok(results.every((result) => result.allowed));
      // One slice of 100 claimed with the first call; the others went with their own count only.
      const check = await counters.hit([rpm(3_200, 0)], T0 + 100);
      assert.equal(check.states[0].remaining, 3_200 - 20 - 100);
      assert.equal(hits, 20);
    });

    test('credit: a burst larger than a claim makes one claim more, sized for the calls still waiting, not one a call', async () => {
      const store = shared.gate();
      const { gate, asked } = countingAllowanceGate(store, 32);
      const budget = account('key:stall:all', 1_000_000_000);
      await seedAtZero(store, [budget]);
      // The first claim covers 32 of the 200.
      const held = await burstOfCalls(gate, 'stall', [budget], 200);
      assert.ok(held.every((result) => result.ok));
      assert.deepEqual(asked, { claims: 2, reserves: 0 });
      // The first claim went to 32 calls; the second was for 32 calls' worth plus the 167 then still
      // waiting, and the last of those 168 left 31 calls' worth in it.
      assert.equal((await store.read(budget.key)).reservedNanos, 200_000 + 31_000);
      for (let index = 0; index < 200; index++) await gate.settle(`stall-${index}`, [budget], 1_000);
      await gate.close();
      assert.deepEqual(await store.read(budget.key), { spentNanos: 200_000, reservedNanos: 0, creditedNanos: 0 });
    });

    test('credit: near an account\'s end a burst the claim does not cover is held call by call, exactly', async () => {
      const store = shared.gate();
      const { gate, asked } = countingAllowanceGate(store, 4);
      // 40 calls' worth left. The first claim gets the 4 calls' worth it asks for; the second, asked
      // for 4 calls' worth and the 45 calls still waiting, is cut to a quarter of the 36 left: 9.
      const budget = account('key:end:all', 40_000);
      await seedAtZero(store, [budget]);
      const held = await burstOfCalls(gate, 'end', [budget], 50);
      assert.deepEqual(asked, { claims: 2, reserves: 50 - 4 - 9 }, 'a claim cut short is not followed by another');
      assert.equal(held.filter((result) => result.ok).length, 40);
      assert.equal((await store.read(budget.key)).reservedNanos, 40_000);
      for (const [index, result] of held.entries()) if (result.ok) await gate.settle(`end-${index}`, [budget], 1_000);
      await gate.close();
      assert.deepEqual(await store.read(budget.key), { spentNanos: 40_000, reservedNanos: 0, creditedNanos: 0 });
    });

    test('credit: a claim retired while a call still runs on it keeps only that call\'s part held', async () => {
      const store = shared.gate();
      const clock = { now: 0 };
      const gate = createAllowanceSpendGate(store, { share: 4, sweepIntervalMs: 0, now: () => clock.now });
      const budget = account('key:long:all', 1_000_000);
      await seedAtZero(store, [budget]);
      assert.deepEqual(await gate.reserve('stream', [budget], 1_000, 60_000), { ok: true });
      assert.equal((await store.read(budget.key)).reservedNanos, 4_000);
      // Past the claim's lifetime: retired, the stream still running.
      clock.now += 20_000;
      await gate.sweepIdle();
      assert.equal((await store.read(budget.key)).reservedNanos, 1_000);
      assert.equal(gate.reserveFromAllowance('next', [budget], 1_000), false, 'nothing is carved from a retired claim');
      await gate.settle('stream', [budget], 900);
      assert.deepEqual(await store.read(budget.key), { spentNanos: 900, reservedNanos: 0, creditedNanos: 0 });
    });

    test('rate limits: two instances with allowances admit exactly the limit between them', async () => {
      const store = shared.counters();
      const instances = [0, 1].map(() => createAllowanceCounterStore(store, { share: 8 }));
      let allowed = 0;
      let local = 0;
      for (let call = 0; call < 120; call++) {
        const instance = instances[call % 2];
        const fromAllowance = instance.hitFromAllowance!([rpm(64)], T0 + call);
        const result = fromAllowance ?? (await instance.hit([rpm(64)], T0 + call));
        if (fromAllowance) local++;
        if (result.allowed) allowed++;
      }
      assert.equal(allowed, 64);
      assert.ok(local >= 40, `most calls were counted from an allowance (${local})`);
      assert.equal((await store.hit([rpm(64)], T0 + 500)).allowed, false, 'the shared window is full');
    });

    test('rate limits: near the limit every call is decided by the shared store; a small limit gets no allowance', async () => {
      const store = shared.counters();
      for (let index = 0; index < 15; index++) await store.hit([rpm(16)], T0);
      const instance = createAllowanceCounterStore(store, { share: 8 });
      // 1 + a slice of 2 does not fit: the call alone does, and no slice is claimed this window.
      assert.equal((await instance.hit([rpm(16)], T0 + 1)).allowed, true);
      assert.equal(instance.hitFromAllowance!([rpm(16)], T0 + 2), undefined);
      const refused = await instance.hit([rpm(16)], T0 + 2);
      assert.equal(refused.allowed, false);
      assert.ok(refused.states[0].retryAfterMs > 0);

      const small = createAllowanceCounterStore(shared.counters(), { share: 8 });
      for (let index = 0; index < 3; index++) {
        assert.equal((await small.hit([{ ...rpm(10), key: 'rpm:small' }], T0 + index)).allowed, true);
        assert.equal(small.hitFromAllowance!([{ ...rpm(10), key: 'rpm:small' }], T0 + index), undefined);
      }
    });

    test('rate limits: the unused part of an allowance goes back to its window when the next one starts', async () => {
      const store = shared.counters();
      const instance = createAllowanceCounterStore(store, { share: 8 });
      // Counts the call and claims 8 more in the first window; none of them is used.
      assert.equal((await instance.hit([rpm(64)], T0)).allowed, true);
      assert.equal((await instance.hit([rpm(64)], T0 + 60_000)).allowed, true);
      // At the next window's start the previous one weighs fully: 1 used there, 1 + 8 claimed here.
      const check = await store.hit([rpm(64, 0)], T0 + 60_000);
      assert.equal(check.states[0].remaining, 64 - 1 - 9);
    });
  });
}

describe('allowances over a Redis store whose instance clock is wrong', { skip: redisUrl ? false : 'GW_TEST_REDIS_URL is not set' }, () => {
  test('a slice is spent only in the window Redis counted it in, and its unused part goes back there', async () => {
    const clock = createRedisClock({ redis: redisConnection(), now: () => Date.now() + 600 });
    await clock.ready;
    const store = createRedisCounterStore({ redis: redisConnection(), prefix: `gwtest:${randomUUID()}:`, clock });
    const instance = createAllowanceCounterStore(store, { share: 4 });
    // This instance's clock is 600 ms ahead: `local(t)` is its reading at Redis time t.
    const local = (t: number) => t + 600;
    const second = 1_700_000_000_000;
    const tps = (amount = 1): WindowLimit => ({ key: 'tps:k1', limit: 100, windowMs: 1_000, amount });
    // Counts the call and claims a slice of 25 in Redis's window `second`.
    assert.equal((await instance.hit([tps()], local(second + 900))).allowed, true);
    assert.ok(instance.hitFromAllowance!([tps()], local(second + 950)), 'spent from the slice within its window');
    // By the instance's own clock this is still the same second; by Redis's it is the next one,
    // where the slice no longer counts: the call goes to Redis.
    assert.equal(instance.hitFromAllowance!([tps()], local(second + 1_100)), undefined);
    assert.equal((await instance.hit([tps()], local(second + 1_100))).allowed, true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Window `second`: 1 + 25 counted, 2 used, 24 given back. The next: 1 + 25. At 100 ms into it
    // the previous weighs 2 × 0.9.
    assert.equal((await store.hit([tps(0)], local(second + 1_100))).states[0].remaining, 72);
    await store.close();
    clock.close();
  });
});
