import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { createRedisCircuitStore } from '../../src/routing/redis-circuit-store.js';
import { createRedisHealthStore } from '../../src/routing/redis-health-store.js';
import { movingAverage } from '../../src/routing/health-store.js';
import { coalesceTurnWrites } from '../../src/lib/redis-turn-writes.js';
import { nextTurn } from '../helpers/deferred.js';
import { countWrites } from '../helpers/redis-socket-writes.js';

const redisUrl = process.env.GW_TEST_REDIS_URL;
const redis = redisUrl ? new Redis(redisUrl, { lazyConnect: false, maxRetriesPerRequest: 1 }) : undefined;
const coalesced: Redis[] = [];
after(() => {
  redis?.disconnect();
  coalesced.forEach((client) => client.disconnect());
});

/** A connection whose unhurried commands wait for an urgent one (the window outlasts the test), and its write count. */
async function coalescedConnection(): Promise<{ connection: Redis; writes: () => number }> {
  const connection = new Redis(redisUrl!, { lazyConnect: true, maxRetriesPerRequest: 1 });
  coalesced.push(connection);
  coalesceTurnWrites(connection, { unhurriedWindowMs: 60_000 });
  await connection.connect();
  return { connection, writes: countWrites(connection) };
}

describe('Redis routing state: outcomes summed in memory, shared on flush', { skip: redisUrl ? false : 'GW_TEST_REDIS_URL is not set: skipped' }, () => {
  test('health: another instance sees the calls after a flush, with the same averages as one by one', async () => {
    const prefix = `gw-test:${randomUUID()}:`;
    const first = createRedisHealthStore(redis!, { prefix, alpha: 0.3, flushIntervalMs: 60_000 });
    const second = createRedisHealthStore(redis!, { prefix, alpha: 0.3, flushIntervalMs: 60_000 });
    const latencies = [120, 80, 300, 45];
    let expected: number | null = null;
    // Two batches from two instances, applied on top of each other.
    for (const [index, latencyMs] of latencies.entries()) {
      const store = index < 2 ? first : second;
      await store.begin('d');
      await store.end('d', { ok: index !== 2, latencyMs });
      expected = movingAverage(expected, latencyMs, 0.3);
      if (index === 1) {
        assert.equal((await second.read(['d'])).get('d')!.samples, 0, 'nothing shared before the flush');
        await first.flush();
      }
    }
    await first.begin('d');
    await second.flush();
    await first.flush();
    const seen = (await second.read(['d'])).get('d')!;
    assert.equal(seen.samples, 4);
    assert.equal(seen.inFlight, 1);
    assert.ok(Math.abs(seen.latencyMs! - expected!) < 1e-4, `${seen.latencyMs} vs ${expected}`);
    assert.ok(Math.abs(seen.errorRate - movingAverage(movingAverage(movingAverage(0, 0, 0.3), 1, 0.3), 0, 0.3)) < 1e-4);
  });

  test('health: a timer flushes on its own', async () => {
    const prefix = `gw-test:${randomUUID()}:`;
    const writer = createRedisHealthStore(redis!, { prefix, flushIntervalMs: 20 });
    const reader = createRedisHealthStore(redis!, { prefix });
    await writer.begin('d');
    await writer.end('d', { ok: true, latencyMs: 10 });
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal((await reader.read(['d'])).get('d')!.samples, 1);
  });

  test('circuit: an allowed answer is reused for a while, then the other instance\'s open circuit is seen', async () => {
    const prefix = `gw-test:${randomUUID()}:`;
    const options = { prefix, consecutiveFailures: 2, coolDownMs: 10_000, closedCacheMs: 100 };
    const here = createRedisCircuitStore(redis!, options);
    const there = createRedisCircuitStore(redis!, options);
    assert.equal(await here.acquire('d', 1_000), 'allowed');
    await there.recordFailure('d', 1_010, 'x');
    assert.equal(await there.recordFailure('d', 1_020, 'x'), true);
    assert.equal(await here.acquire('d', 1_050), 'allowed', 'still trusted');
    assert.equal(await here.acquire('d', 1_100), 'allowed', 'trust aged: let through while the state is re-read');
    let answer = 'allowed';
    for (let tries = 0; tries < 100 && answer === 'allowed'; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      answer = await here.acquire('d', 1_110);
    }
    assert.equal(answer, 'denied', 'the re-read found the circuit open: the shared state answers');
  });

  test('circuit: an allowed answer not confirmed for closedStaleMs is not used at all', async () => {
    const prefix = `gw-test:${randomUUID()}:`;
    const options = { prefix, consecutiveFailures: 2, coolDownMs: 10_000, closedCacheMs: 100, closedStaleMs: 300 };
    const here = createRedisCircuitStore(redis!, options);
    const there = createRedisCircuitStore(redis!, options);
    assert.equal(await here.acquire('d', 1_000), 'allowed');
    await there.recordFailure('d', 1_010, 'x');
    await there.recordFailure('d', 1_020, 'x');
    assert.equal(await here.acquire('d', 1_300), 'denied', 'after a pause the first call asks the shared state');
  });

  test('circuit: steady traffic keeps the trust renewed in the background, and a local failure ends it', async () => {
    const prefix = `gw-test:${randomUUID()}:`;
    const options = { prefix, consecutiveFailures: 3, coolDownMs: 10_000, closedCacheMs: 100, closedStaleMs: 300 };
    const here = createRedisCircuitStore(redis!, options);
    assert.equal(await here.acquire('d', 1_000), 'allowed');
    for (let now = 1_050; now <= 2_000; now += 50) {
      assert.equal(await here.acquire('d', now), 'allowed', `at ${now}`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await here.recordFailure('d', 2_010, 'x');
    await here.recordFailure('d', 2_020, 'x');
    assert.equal(await here.recordFailure('d', 2_030, 'x'), true);
    assert.equal(await here.acquire('d', 2_040), 'denied', 'no trust survives a local failure');
  });

  test('the background writes (a trusted circuit re-read, the timed flushes) leave with the next call\'s write, not in one of their own', async () => {
    const prefix = `gw-test:${randomUUID()}:`;
    const { connection, writes } = await coalescedConnection();
    const circuit = createRedisCircuitStore(connection, { prefix, consecutiveFailures: 2, coolDownMs: 10_000, closedCacheMs: 100, flushIntervalMs: 10 });
    const health = createRedisHealthStore(connection, { prefix, flushIntervalMs: 10 });
    const other = createRedisCircuitStore(redis!, { prefix, consecutiveFailures: 2, coolDownMs: 10_000 });
    const now = Date.now();
    assert.equal(await circuit.acquire('d', now), 'allowed');
    // Another instance opens 'd' and counts a failure of 'e'.
    await other.recordFailure('d', now + 10, 'x');
    assert.equal(await other.recordFailure('d', now + 20, 'x'), true);
    await other.recordFailure('e', now + 20, 'x');
    const before = writes();
    // Here the trust in 'd' has aged: the call goes on at once and the state is re-read.
    assert.equal(await circuit.acquire('d', now + 150), 'allowed');
    await circuit.recordSuccess('e', now + 160);
    await health.begin('d');
    await health.end('d', { ok: true, latencyMs: 12 });
    await new Promise((resolve) => setTimeout(resolve, 40));
    await nextTurn();
    assert.equal(writes(), before, 'the re-read and both timed flushes are still waiting');
    assert.equal((await other.read('e', now + 170)).consecutiveFailures, 1, "the success of 'e' has not reached Redis");
    assert.equal(await circuit.acquire('d', now + 170), 'allowed', 'the re-read has not been answered yet');
    // The next urgent command (a call's admission, here a PING) takes them along in its one write.
    assert.equal(await connection.ping(), 'PONG');
    assert.equal(writes(), before + 1);
    await nextTurn();
    assert.equal(await circuit.acquire('d', now + 180), 'denied', 'the re-read found the circuit open');
    assert.equal((await other.read('e', now + 180)).consecutiveFailures, 0, 'the circuit flush reached Redis');
    assert.equal((await health.read(['d'])).get('d')!.samples, 1, 'the health flush reached Redis');
  });

  test('circuit: successes reach Redis on the timer and reset the other instance\'s failure count', async () => {
    const prefix = `gw-test:${randomUUID()}:`;
    const options = { prefix, consecutiveFailures: 2, coolDownMs: 10_000, flushIntervalMs: 20 };
    const here = createRedisCircuitStore(redis!, options);
    const there = createRedisCircuitStore(redis!, options);
    await there.recordFailure('d', Date.now(), 'x');
    await here.recordSuccess('d', Date.now());
    assert.equal((await there.read('d', Date.now())).consecutiveFailures, 1, 'the success is still in memory');
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal((await there.read('d', Date.now())).consecutiveFailures, 0);
    assert.equal(await there.recordFailure('d', Date.now(), 'x'), false, 'one failure after the success does not open it');
  });
});
