import type { SpendLedger } from './spend-ledger.js';
import type { SpendAccount, SpendGate } from './spend-gate.js';

/**
 * Loads an account's counters from SQL the first time this instance touches it (in each period):
 * spent from the ledger since the period began, and for credit accounts the credited total. The
 * gate's seed is set-if-absent, so a counter another instance is already using is never clobbered.
 * Seeding happens once per account per instance; afterwards `ensure` returns undefined at once.
 */
export interface SpendSeeder {
  ensure(accounts: readonly SpendAccount[]): Promise<void> | undefined;
}

const MAX_REMEMBERED = 100_000;

export function createSpendSeeder(options: { gate: SpendGate; ledger: SpendLedger }): SpendSeeder {
  const seeded = new Set<string>();
  const inFlight = new Map<string, Promise<void>>();

  async function seedOne(account: SpendAccount): Promise<void> {
    const { ledger } = options;
    let spentNanos: number;
    let creditedNanos: number | undefined;
    if (account.kind === 'credit') {
      [spentNanos, creditedNanos] = await Promise.all([ledger.spentSince({ orgId: account.orgId }, 0), ledger.creditedTotal(account.orgId)]);
    } else if (account.kind === 'org') {
      spentNanos = await ledger.spentSince({ orgId: account.ownerId }, account.periodStartMs);
    } else if (account.kind === 'team') {
      spentNanos = await ledger.spentSince({ teamId: account.ownerId }, account.periodStartMs);
    } else {
      spentNanos = await ledger.spentSince({ keyId: account.ownerId, user: account.user }, account.periodStartMs);
    }
    await options.gate.seed(account, { spentNanos, creditedNanos });
    if (seeded.size >= MAX_REMEMBERED) seeded.clear();
    seeded.add(account.key);
  }

  function seed(account: SpendAccount): Promise<void> {
    let pending = inFlight.get(account.key);
    if (!pending) {
      pending = seedOne(account).finally(() => inFlight.delete(account.key));
      inFlight.set(account.key, pending);
    }
    return pending;
  }

  return {
    ensure(accounts) {
      let pending: Array<Promise<void>> | undefined;
      for (const account of accounts) {
        if (seeded.has(account.key)) continue;
        (pending ??= []).push(seed(account));
      }
      return pending ? Promise.all(pending).then(() => undefined) : undefined;
    },
  };
}
