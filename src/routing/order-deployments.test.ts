import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_TIMEOUTS, type Deployment } from './catalog-types.js';
import { emptyStats } from './health-store.js';
import { orderDeployments, weightedShuffle } from './order-deployments.js';

function deployment(id: string, overrides: Partial<Deployment> = {}): Deployment {
  return {
    id, modelId: 'm', provider: 'p', upstreamModel: id, baseUrl: null, credentialId: null, weight: 1, priority: 0,
    timeouts: DEFAULT_TIMEOUTS, rpm: null, tpm: null, pricing: null, settings: {}, enabled: true, ...overrides,
  };
}
const ids = (list: Deployment[]) => list.map((item) => item.id);
const sequence = (...values: number[]) => () => values.shift() ?? 0;

test('weighted draw picks in proportion to weight, without replacement, weight 0 last', () => {
  const list = [deployment('a', { weight: 1 }), deployment('b', { weight: 3 }), deployment('z', { weight: 0 })];
  // Total 4: a covers [0,1), b covers [1,4).
  assert.deepEqual(ids(weightedShuffle(list, sequence(0.1, 0))), ['a', 'b', 'z']);
  assert.deepEqual(ids(weightedShuffle(list, sequence(0.3, 0))), ['b', 'a', 'z']);
  assert.deepEqual(ids(weightedShuffle(list, sequence(0.99, 0))), ['b', 'a', 'z']);
});

test('priority: lower number first, weighted within a tier', () => {
  const list = [deployment('low', { priority: 1 }), deployment('a', { weight: 1 }), deployment('b', { weight: 3 })];
  assert.deepEqual(ids(orderDeployments('priority', list, { random: sequence(0.9, 0.9, 0) })), ['b', 'a', 'low']);
  assert.deepEqual(ids(orderDeployments('priority', list, { random: sequence(0.1, 0.1, 0) })), ['a', 'b', 'low']);
});

test('least-latency: unmeasured first, then fastest; streams rank by time to first token', () => {
  const list = [deployment('slow'), deployment('fast'), deployment('new')];
  const stats = new Map([
    ['slow', { ...emptyStats(), latencyMs: 900, timeToFirstTokenMs: 50 }],
    ['fast', { ...emptyStats(), latencyMs: 100, timeToFirstTokenMs: 80 }],
  ]);
  assert.deepEqual(ids(orderDeployments('least-latency', list, { random: () => 0, stats })), ['new', 'fast', 'slow']);
  assert.deepEqual(ids(orderDeployments('least-latency', list, { random: () => 0, stats, stream: true })), ['new', 'slow', 'fast']);
});

test('least-busy: fewest in flight first', () => {
  const list = [deployment('a'), deployment('b'), deployment('c')];
  const stats = new Map([
    ['a', { ...emptyStats(), inFlight: 5 }],
    ['b', { ...emptyStats(), inFlight: 1 }],
    ['c', { ...emptyStats(), inFlight: 3 }],
  ]);
  assert.deepEqual(ids(orderDeployments('least-busy', list, { random: () => 0, stats })), ['b', 'c', 'a']);
});

test('lowest-cost: cheapest first, unpriced last', () => {
  const prices: Record<string, number | undefined> = { a: 30, b: 10, c: undefined, d: 20 };
  const list = [deployment('a'), deployment('b'), deployment('c'), deployment('d')];
  assert.deepEqual(
    ids(orderDeployments('lowest-cost', list, { random: () => 0, priceOf: (item) => prices[item.id] })),
    ['b', 'd', 'a', 'c'],
  );
});
