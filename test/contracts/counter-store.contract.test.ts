import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import type { CounterStore, WindowLimit } from '../../src/ratelimit/counter-store.js';
import { createMemoryCounterStore } from '../../src/ratelimit/memory-counter-store.js';
import { CALLER_CLOCK, createRedisClock } from '../../src/ratelimit/redis-clock.js';
import { createRedisCounterStore } from '../../src/ratelimit/redis-counter-store.js';
import { TEST_REDIS_URL, testRedisConnections } from '../helpers/test-databases.js';

const redisUrl = TEST_REDIS_URL;
const redisConnection = testRedisConnections();

const implementations: Array<{ name: string; skip: string | false; make(): CounterStore }> = [
  { name: 'memory', skip: false, make: () => createMemoryCounterStore({ sweepIntervalMs: 0 }) },
  {
    name: 'redis',
    skip: redisUrl ? false : 'GW_TEST_REDIS_URL is not set',
    make() {
      const redis = redisConnection();
      // Fixed instants: windows by the caller's clock (Redis time has its own tests below).
      return createRedisCounterStore({ redis, prefix: `gwtest:${randomUUID()}:`, clock: CALLER_CLOCK });
    },
  },
];

// A fixed instant at the start of a minute, so window arithmetic in the assertions is simple.
const T0 = 1_700_000_040_000;

const limit = (key: string, max: number, amount = 1, windowMs = 60_000): WindowLimit => ({ key, limit: max, windowMs, amount });

for (const implementation of implementations) {
  describe(`CounterStore contract: ${implementation.name}`, { skip: implementation.skip }, () => {
    test('counts up to the limit, then refuses with a retry time', async () => {
      const store = implementation.make();
      for (let index = 0; index < 3; index++) {
        const result = await store.hit([limit('a', 3)], T0 + index);
        assert.equal(result.allowed, true);
        assert.equal(result.states[0].remaining, 2 - index);
      }
      const refused = await store.hit([limit('a', 3)], T0 + 10);
      assert.equal(refused.allowed, false);
      assert.equal(refused.blockedIndex, 0);
      assert.equal(refused.states[0].remaining, 0);
      // The 3 calls still weigh 3 when this window ends; a fourth fits once their weight is 2,
      // a third into the next window. The reset (headers) and the retry time say the same.
      assert.equal(refused.states[0].retryAfterMs, 60_000 - 10 + 20_000);
      assert.equal(refused.states[0].resetMs, refused.states[0].retryAfterMs);
      await store.close();
    });

    test('the reset time is when a request is next admitted: refused 1 ms before it, admitted at it', async () => {
      for (const [max, calls] of [[3, 3], [10, 10], [7, 4]] as const) {
        const store = implementation.make();
        const key = `r${max}-${calls}`;
        // Calls spread over the first window, and the rest of the limit filled in the second.
        for (let index = 0; index < calls; index++) await store.hit([limit(key, max)], T0 + index * 1_000);
        let now = T0 + 60_000 + 5_000;
        while ((await store.hit([limit(key, max)], now)).allowed) now += 1;
        const refused = await store.hit([limit(key, max)], now);
        assert.equal(refused.allowed, false);
        const waitMs = refused.states[0].resetMs;
        assert.ok(waitMs > 0 && waitMs === refused.states[0].retryAfterMs, `reset ${waitMs} ms`);
        assert.equal((await store.hit([limit(key, max)], now + waitMs - 1)).allowed, false, `${key}: still refused 1 ms before the reset`);
        const admitted = await store.hit([limit(key, max)], now + waitMs);
        assert.equal(admitted.allowed, true, `${key}: admitted at the reset`);
        await store.close();
      }
    });

    test('while there is room the reset is 0: a request would be admitted now', async () => {
      const store = implementation.make();
      const first = await store.hit([limit('room', 2)], T0);
      assert.equal(first.states[0].resetMs, 0);
      const full = await store.hit([limit('room', 2)], T0 + 1);
      assert.equal(full.states[0].remaining, 0);
      assert.ok(full.states[0].resetMs > 60_000, 'full: not before the two calls weigh less than 1');
      await store.close();
    });

    test('all-or-nothing: a refused call counts in no window', async () => {
      const store = implementation.make();
      assert.equal((await store.hit([limit('roomy', 100), limit('tight', 1)], T0)).allowed, true);
      const refused = await store.hit([limit('roomy', 100), limit('tight', 1)], T0 + 1);
      assert.equal(refused.blockedIndex, 1);
      const roomy = await store.hit([limit('roomy', 100, 0)], T0 + 2);
      assert.equal(roomy.states[0].remaining, 99);
      await store.close();
    });

    test('sliding window: the previous window weighs by its overlap', async () => {
      const store = implementation.make();
      for (let index = 0; index < 10; index++) await store.hit([limit('s', 10)], T0 + index);
      // Half-way into the next window, the previous 10 weigh 5: five more fit, the sixth does not.
      const half = T0 + 60_000 + 30_000;
      for (let index = 0; index < 5; index++) assert.equal((await store.hit([limit('s', 10)], half)).allowed, true, `call ${index}`);
      assert.equal((await store.hit([limit('s', 10)], half)).allowed, false);
      // Two windows later everything has aged out.
      assert.equal((await store.hit([limit('s', 10)], T0 + 180_000)).states[0].remaining, 9);
      await store.close();
    });

    test('token amounts and later corrections', async () => {
      const store = implementation.make();
      assert.equal((await store.hit([limit('tpm', 1000, 600)], T0)).states[0].remaining, 400);
      assert.equal((await store.hit([limit('tpm', 1000, 600)], T0 + 1)).allowed, false);
      await store.adjust('tpm', 60_000, T0, -500);
      const after = await store.hit([limit('tpm', 1000, 600)], T0 + 2);
      assert.equal(after.allowed, true);
      assert.equal(after.states[0].remaining, 300);
      await store.adjust('tpm', 60_000, T0, -10_000);
      assert.equal((await store.hit([limit('tpm', 1000, 0)], T0 + 3)).states[0].remaining, 1000);
      await store.close();
    });

    test('concurrency: 60 parallel calls against an RPM of 9 admit exactly 9', async () => {
      const store = implementation.make();
      const results = await Promise.all(Array.from({ length: 60 }, () => store.hit([limit('conc', 9), limit('conc-tps', 1000, 1, 1000)], T0)));
      assert.equal(results.filter((result) => result.allowed).length, 9);
      await store.close();
    });
  });
}

describe('Redis counter store: window counters expire', { skip: redisUrl ? false : 'GW_TEST_REDIS_URL is not set' }, () => {
  test('two windows after the increment that created them; later increments keep that expiry', async () => {
    const redis = redisConnection();
    const prefix = `gwtest:${randomUUID()}:`;
    const store = createRedisCounterStore({ redis, prefix, clock: CALLER_CLOCK });
    const key = `${prefix}ttl:${Math.floor(T0 / 60_000)}`;
    await store.hit([limit('ttl', 10)], T0);
    const created = await redis.pttl(key);
    assert.ok(created > 110_000 && created <= 120_000, `a new counter lives two windows (pttl ${created})`);
    // Shortened by hand: a later increment that finds the counter must not extend it again.
    await redis.pexpire(key, 5_000);
    await store.hit([limit('ttl', 10)], T0 + 1);
    const kept = await redis.pttl(key);
    assert.ok(kept > 0 && kept <= 5_000, `an existing counter keeps its expiry (pttl ${kept})`);
    assert.equal(await redis.get(key), '2');
    // A counter that expired is created anew by the next increment, with a fresh expiry.
    await redis.del(key);
    await store.hit([limit('ttl', 10)], T0 + 2);
    assert.equal(await redis.get(key), '1');
    assert.ok((await redis.pttl(key)) > 110_000);
    await store.close();
  });
});

describe('Redis counter store: windows by Redis time, not each instance\'s clock', { skip: redisUrl ? false : 'GW_TEST_REDIS_URL is not set' }, () => {
  const connect = () => redisConnection();
  const SKEW_MS = 600;

  test('the clock reads the offset of a local clock from Redis TIME', async () => {
    const redis = connect();
    const behind = createRedisClock({ redis, now: () => Date.now() - SKEW_MS });
    const right = createRedisClock({ redis });
    await Promise.all([behind.ready, right.ready]);
    assert.ok(Math.abs(right.offsetMs()) <= 20, `same host, same clock (offset ${right.offsetMs()} ms)`);
    assert.ok(Math.abs(behind.offsetMs() - SKEW_MS) <= 20, `600 ms behind (offset ${behind.offsetMs()} ms)`);
    const local = Date.now() - SKEW_MS;
    assert.ok(Math.abs(behind.toStoreTime(local) - right.toStoreTime(local + SKEW_MS)) <= 20);
    behind.close();
    right.close();
  });

  test('a new reading follows a local clock that was stepped', async () => {
    let skewMs = 0;
    const clock = createRedisClock({ redis: connect(), now: () => Date.now() + skewMs, refreshMs: 60_000 });
    await clock.ready;
    assert.ok(Math.abs(clock.offsetMs()) <= 20);
    skewMs = 2_000;
    await clock.calibrate();
    assert.ok(Math.abs(clock.offsetMs() + 2_000) <= 20, `offset ${clock.offsetMs()} ms`);
    clock.close();
  });

  test('two instances whose clocks are 600 ms apart share a TPS limit exactly, and report the same reset', async () => {
    const prefix = `gwtest:${randomUUID()}:`;
    const clockA = createRedisClock({ redis: connect() });
    const clockB = createRedisClock({ redis: connect(), now: () => Date.now() - SKEW_MS });
    await Promise.all([clockA.ready, clockB.ready]);
    const a = createRedisCounterStore({ redis: connect(), prefix, clock: clockA });
    const b = createRedisCounterStore({ redis: connect(), prefix, clock: clockB });
    const tps = [limit('tps:k1', 10, 1, 1_000)];
    // Instance A's clock is right; B's is 600 ms behind (in the previous second by its own
    // reckoning). Over 250 ms of real time, 300 ms into a second, each sends 10 calls, interleaved.
    const real0 = 1_700_000_000_300;
    let admitted = 0;
    for (let index = 0; index < 10; index++) {
      const real = real0 + index * 25;
      if ((await a.hit(tps, real)).allowed) admitted++;
      if ((await b.hit(tps, real - SKEW_MS)).allowed) admitted++;
    }
    assert.equal(admitted, 10, 'one window between them: the limit, not up to twice it');
    const refusedA = await a.hit(tps, real0 + 250);
    const refusedB = await b.hit(tps, real0 + 250 - SKEW_MS);
    assert.equal(refusedA.allowed || refusedB.allowed, false);
    // The reset (x-ratelimit-reset-*, Retry-After) is reckoned in Redis time: the same on both.
    assert.ok(Math.abs(refusedA.states[0].resetMs - refusedB.states[0].resetMs) <= 5, `resets ${refusedA.states[0].resetMs} and ${refusedB.states[0].resetMs} ms`);
    // A token correction finds the window its call was counted in, whatever the instance's clock.
    await b.hit([limit('tpm:k1', 1_000, 600, 1_000)], real0 - SKEW_MS);
    await b.adjust('tpm:k1', 1_000, real0 - SKEW_MS, -500);
    assert.equal((await a.hit([limit('tpm:k1', 1_000, 0, 1_000)], real0 + 1)).states[0].remaining, 900);
    await Promise.all([a.close(), b.close()]);
    clockA.close();
    clockB.close();
  });
});
