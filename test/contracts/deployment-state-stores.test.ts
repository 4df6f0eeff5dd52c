import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import type { CircuitOptions, CircuitStore } from '../../src/routing/circuit-store.js';
import type { HealthStore } from '../../src/routing/health-store.js';
import { createMemoryCircuitStore } from '../../src/routing/memory-circuit-store.js';
import { createMemoryHealthStore } from '../../src/routing/memory-health-store.js';
import { createRedisCircuitStore } from '../../src/routing/redis-circuit-store.js';
import { createRedisHealthStore } from '../../src/routing/redis-health-store.js';

const redisUrl = process.env.GW_TEST_REDIS_URL;
const redis = redisUrl ? new Redis(redisUrl, { lazyConnect: false, maxRetriesPerRequest: 1 }) : undefined;
after(() => redis?.disconnect());
const skipRedis = redisUrl ? false : 'GW_TEST_REDIS_URL is not set: Redis circuit/health store contract skipped';

const options: Partial<CircuitOptions> = { consecutiveFailures: 3, failureRate: 0.5, minimumCalls: 6, windowMs: 1000, coolDownMs: 500 };

const implementations: Array<{
  name: string;
  skip: string | false;
  circuits: () => CircuitStore;
  health: () => HealthStore;
}> = [
  { name: 'memory', skip: false, circuits: () => createMemoryCircuitStore(options), health: () => createMemoryHealthStore({ alpha: 0.5 }) },
  {
    name: 'redis',
    skip: skipRedis,
    circuits: () => createRedisCircuitStore(redis!, { ...options, prefix: `gw-test:${randomUUID()}:` }),
    health: () => createRedisHealthStore(redis!, { prefix: `gw-test:${randomUUID()}:`, alpha: 0.5 }),
  },
];

for (const implementation of implementations) {
  describe(`CircuitStore contract: ${implementation.name}`, { skip: implementation.skip }, () => {
    test('opens after consecutive failures, once', async () => {
      const store = implementation.circuits();
      assert.equal(await store.acquire('d', 0), 'allowed');
      assert.equal(await store.recordFailure('d', 1, 'upstream_unavailable'), false);
      assert.equal(await store.recordFailure('d', 2, 'upstream_unavailable'), false);
      assert.equal(await store.recordFailure('d', 3, 'upstream_timeout'), true);
      assert.equal(await store.recordFailure('d', 4, 'upstream_timeout'), false, 'already open: no second announcement');
      const state = await store.read('d', 5);
      assert.equal(state.state, 'open');
      assert.equal(state.openedAt, 3);
      assert.equal(state.reason, 'upstream_timeout');
      assert.equal(await store.acquire('d', 100), 'denied');
    });

    test('a success resets the consecutive count', async () => {
      const store = implementation.circuits();
      await store.recordFailure('d', 1, 'x');
      await store.recordFailure('d', 2, 'x');
      await store.recordSuccess('d', 3);
      assert.equal(await store.recordFailure('d', 4, 'x'), false);
      assert.equal((await store.read('d', 5)).state, 'closed');
    });

    test('opens on the failure rate over the window once enough calls were seen', async () => {
      const store = implementation.circuits();
      // F S F S F F: consecutive never reaches 3 before the 6th call; 4/6 ≥ 0.5 opens it on the 6th.
      const outcomes = [false, true, false, true, false];
      for (const [index, ok] of outcomes.entries()) {
        if (ok) await store.recordSuccess('d', index);
        else assert.equal(await store.recordFailure('d', index, 'x'), false);
      }
      assert.equal(await store.recordFailure('d', 5, 'x'), true);
    });

    test('the window forgets old calls', async () => {
      const store = implementation.circuits();
      for (let index = 0; index < 5; index += 1) {
        if (index % 2 === 0) await store.recordFailure('d', index, 'x');
        else await store.recordSuccess('d', index);
      }
      // Window restarts at t=2000: the next failure is 1 of 1 call, below minimumCalls.
      assert.equal(await store.recordFailure('d', 2000, 'x'), false);
    });

    test('half-open: one probe after the cool-down; failure reopens, success closes', async () => {
      const store = implementation.circuits();
      for (let index = 0; index < 3; index += 1) await store.recordFailure('d', 10, 'x');
      assert.equal(await store.acquire('d', 400), 'denied');
      assert.equal(await store.acquire('d', 510), 'probe');
      assert.equal(await store.acquire('d', 511), 'denied', 'only one probe at a time');
      assert.equal(await store.recordFailure('d', 520, 'x'), false);
      assert.equal((await store.read('d', 521)).state, 'open');
      assert.equal(await store.acquire('d', 600), 'denied', 'cool-down restarted at the failed probe');
      assert.equal(await store.acquire('d', 1020), 'probe');
      await store.recordSuccess('d', 1030);
      assert.equal((await store.read('d', 1031)).state, 'closed');
      assert.equal(await store.acquire('d', 1032), 'allowed');
    });

    test('a probe that never reports is replaced after a cool-down', async () => {
      const store = implementation.circuits();
      for (let index = 0; index < 3; index += 1) await store.recordFailure('d', 0, 'x');
      assert.equal(await store.acquire('d', 500), 'probe');
      assert.equal(await store.acquire('d', 999), 'denied');
      assert.equal(await store.acquire('d', 1000), 'probe');
    });

    test('deployments are independent', async () => {
      const store = implementation.circuits();
      for (let index = 0; index < 3; index += 1) await store.recordFailure('a', 0, 'x');
      assert.equal(await store.acquire('a', 1), 'denied');
      assert.equal(await store.acquire('b', 1), 'allowed');
    });
  });

  describe(`HealthStore contract: ${implementation.name}`, { skip: implementation.skip }, () => {
    test('moving averages, error rate and in-flight count', async () => {
      const store = implementation.health();
      await store.begin('d');
      await store.begin('d');
      assert.equal((await store.read(['d'])).get('d')!.inFlight, 2);
      await store.end('d', { ok: true, latencyMs: 100, timeToFirstTokenMs: 40 });
      await store.end('d', { ok: false, latencyMs: 300 });
      const stats = (await store.read(['d', 'other'])).get('d')!;
      assert.equal(stats.inFlight, 0);
      assert.equal(stats.samples, 2);
      assert.equal(stats.latencyMs, 200); // alpha 0.5: 0.5·300 + 0.5·100
      assert.equal(stats.timeToFirstTokenMs, 40);
      assert.equal(stats.errorRate, 0.5);
      assert.deepEqual((await store.read(['other'])).get('other'), {
        latencyMs: null, timeToFirstTokenMs: null, errorRate: 0, samples: 0, inFlight: 0,
      });
    });

    test('a cancelled call only lowers in-flight, never below zero', async () => {
      const store = implementation.health();
      await store.begin('d');
      await store.end('d', null);
      await store.end('d', null);
      const stats = (await store.read(['d'])).get('d')!;
      assert.equal(stats.inFlight, 0);
      assert.equal(stats.samples, 0);
    });
  });
}
