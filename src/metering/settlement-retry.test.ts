import assert from 'node:assert/strict';
import { test } from 'node:test';
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
