import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createEventBus, type GatewayEvent } from '../lib/event-bus.js';
import { createThresholdNotifier } from './budget-thresholds.js';
import { createMemorySpendGate } from './memory-spend-gate.js';
import { createSettlementRetry } from './settlement-retry.js';
import type { SpendAccount, SpendGate } from './spend-gate.js';

const account: SpendAccount = {
  key: 'credit:org-1',
  kind: 'credit',
  limitNanos: null,
  expiresAt: 0,
  orgId: 'org-1',
  ownerId: 'org-1',
  period: 'none',
  periodStartMs: 0,
  thresholds: [],
};

/** The memory gate behind a switch that makes every call fail, like Redis going away. */
function switchableGate(): { gate: SpendGate; down: { value: boolean } } {
  const inner = createMemorySpendGate();
  const down = { value: false };
  const gate = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => (down.value ? Promise.reject(new Error('store away')) : value.apply(target, args));
    },
  });
  return { gate, down };
}

test('a settlement deferred during an outage is applied once when the store is back', async () => {
  const { gate, down } = switchableGate();
  await gate.addCredit(account.key, 100_000);
  assert.deepEqual(await gate.reserve('r1', [account], 10_000, 60_000), { ok: true });
  const retry = createSettlementRetry({ gate, intervalMs: 60_000 });
  down.value = true;
  retry.defer({ kind: 'settle', reservationId: 'r1', accounts: [account], actualNanos: 7_000 });
  await retry.replay();
  assert.equal(retry.pending, 1, 'kept while the store is away');
  down.value = false;
  await retry.replay();
  assert.equal(retry.pending, 0);
  assert.deepEqual(await gate.read(account.key), { spentNanos: 7_000, reservedNanos: 0, creditedNanos: 100_000 });
  // A replay of a settlement that already landed (its reply was lost) is not counted twice.
  retry.defer({ kind: 'settle', reservationId: 'r1', accounts: [account], actualNanos: 7_000 });
  await retry.close();
  assert.equal((await gate.read(account.key)).spentNanos, 7_000);
});

test('a deferred release drops a hold whose reservation reply was lost', async () => {
  const { gate } = switchableGate();
  await gate.addCredit(account.key, 100_000);
  await gate.reserve('r2', [account], 10_000, 60_000);
  const retry = createSettlementRetry({ gate, intervalMs: 60_000 });
  retry.defer({ kind: 'release', reservationId: 'r2' });
  await retry.close();
  assert.equal((await gate.read(account.key)).reservedNanos, 0);
});

test('a replayed settlement that crosses a budget threshold fires it exactly once', async () => {
  const { gate, down } = switchableGate();
  const events = createEventBus();
  const published: GatewayEvent[] = [];
  events.subscribe((event) => published.push(event));
  const thresholds = createThresholdNotifier({ gate, events });
  // As create-metering.ts wires it.
  const retry = createSettlementRetry({
    gate,
    intervalMs: 60_000,
    onSettled: (write, settled) => void thresholds.check(write.accounts, settled, write.actualNanos, write.context!),
  });
  const budget: SpendAccount = { ...account, key: 'key:k1:all', kind: 'key', limitNanos: 1_000, ownerId: 'k1', thresholds: [0.5, 0.8, 1] };
  assert.deepEqual(await gate.reserve('r1', [budget], 700, 60_000), { ok: true });
  // The first settlement (600 of 1,000: past 50%) fails; the meter stage defers it.
  down.value = true;
  await assert.rejects(gate.settle('r1', [budget], 600));
  retry.defer({ kind: 'settle', reservationId: 'r1', accounts: [budget], actualNanos: 600, context: { keyAlias: 'ci', requestId: 'r1', model: 'm' } });
  down.value = false;
  await retry.replay();
  // A second replay of the same settlement (its reply lost) adds nothing and fires nothing.
  retry.defer({ kind: 'settle', reservationId: 'r1', accounts: [budget], actualNanos: 600, context: { keyAlias: 'ci', requestId: 'r1', model: 'm' } });
  await retry.close();
  await new Promise((resolve) => setImmediate(resolve));
  const crossings = published.filter((event) => event.kind === 'budget.threshold');
  assert.equal(crossings.length, 1);
  assert.equal(crossings[0].details.threshold, 0.5);
  assert.equal(crossings[0].details.key_alias, 'ci');
});

test('settlements given up (dropped from a full queue, or left at shutdown) are handed on for repair; releases are not', async () => {
  const { gate, down } = switchableGate();
  const lost: string[] = [];
  const errors: string[] = [];
  const retry = createSettlementRetry({
    gate,
    intervalMs: 60_000,
    maxPending: 2,
    onError: (_error, context) => void errors.push(context),
    onLost: async (writes) => void lost.push(...writes.map((write) => write.reservationId)),
  });
  down.value = true;
  retry.defer({ kind: 'settle', reservationId: 's1', accounts: [account], actualNanos: 1 });
  retry.defer({ kind: 'release', reservationId: 'x1' });
  retry.defer({ kind: 'settle', reservationId: 's2', accounts: [account], actualNanos: 1 });
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(lost, ['s1'], 'the oldest, dropped');
  await retry.close();
  assert.deepEqual(lost, ['s1', 's2']);
  assert.equal(retry.pending, 0);
  assert.ok(errors.includes('spend counters marked for repair'), errors.join('; '));
});

test('without a way to repair, a settlement left at shutdown is reported as short of the ledger', async () => {
  const { gate, down } = switchableGate();
  const errors: string[] = [];
  const retry = createSettlementRetry({ gate, intervalMs: 60_000, onError: (_error, context) => void errors.push(context) });
  down.value = true;
  retry.defer({ kind: 'settle', reservationId: 's1', accounts: [account], actualNanos: 1 });
  await retry.close();
  assert.ok(errors.some((context) => context.includes('spend counters short of the ledger')), errors.join('; '));
});
