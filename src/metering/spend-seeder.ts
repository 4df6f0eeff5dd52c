import { isPromise, type Awaitable } from '../lib/awaitable.js';
import type { SpendLedger } from './spend-ledger.js';
import { UnseededAccountsError, type SpendAccount, type SpendGate } from './spend-gate.js';
import { budgetCounterKeys, type BudgetOwnerKind } from './spend-accounts.js';
import { createPeriodClock } from './spend-periods.js';

/**
 * Loads an account's counters from SQL the first time this instance touches it (in each period):
 * spent from the ledger since the period began, and for credit accounts the credited total. The
 * gate's seed is set-if-unseeded, so a counter another instance is already using is never clobbered.
 * An account is seeded once per instance; afterwards `ensure` returns undefined at once. The gate
 * answers UnseededAccountsError for a counter it lost (Redis restarted empty, flushed or evicted
 * it): `seedingGate` then seeds it again and tries once more.
 */
export interface SpendSeeder {
  ensure(accounts: readonly SpendAccount[]): Promise<void> | undefined;
  /** Seeds these accounts again (set-if-unseeded in the gate), after the gate said it has lost them. */
  reseed(accounts: readonly SpendAccount[]): Promise<void>;
  /** Forgets what this instance seeded: the store may come back without it (a reconnection). */
  forget(): void;
  /**
   * An org, team or key changed (its budget may have been removed and set again, its counter
   * missing the spend made meanwhile): its budget counters of the current periods are marked for
   * seeding again from SQL. Per-user counters need no mark: a per-user budget set again has a new
   * generation in their names (Budget.generation), so every instance starts new ones.
   */
  ownerChanged(kind: BudgetOwnerKind, ownerId: string): Promise<void>;
  /** An account this instance has seeded (even before `forget`), by counter name. */
  accountOf(accountKey: string): SpendAccount | undefined;
}

const MAX_REMEMBERED = 100_000;

export interface SpendSeederOptions {
  gate: SpendGate;
  ledger: SpendLedger;
  now?: () => number;
}

export function createSpendSeeder(options: SpendSeederOptions): SpendSeeder {
  const { gate, ledger } = options;
  const windowOf = createPeriodClock(options.now);
  /** Accounts seeded by this instance since it last forgot, by counter name. */
  const seeded = new Map<string, SpendAccount>();
  /** Every account seeded by this instance: what a lost counter named only by its key is seeded as. */
  const known = new Map<string, SpendAccount>();
  const inFlight = new Map<string, Promise<void>>();

  async function seedOne(account: SpendAccount, afterLoss: boolean): Promise<void> {
    // This instance's costs still queued for SQL would be missing from what the seeding reads: a
    // lost counter had them, and a budget set again counts the calls just made without it.
    if (afterLoss || account.setAgain) await ledger.flush();
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
    await gate.seed(account, { spentNanos, creditedNanos });
    if (seeded.size >= MAX_REMEMBERED) seeded.clear();
    if (known.size >= MAX_REMEMBERED) known.clear();
    seeded.set(account.key, account);
    known.set(account.key, account);
  }

  function seed(account: SpendAccount, afterLoss = false): Promise<void> {
    let pending = inFlight.get(account.key);
    if (!pending) {
      pending = seedOne(account, afterLoss).finally(() => inFlight.delete(account.key));
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
    async reseed(accounts) {
      for (const account of accounts) seeded.delete(account.key);
      await Promise.all(accounts.map((account) => seed(account, true)));
    },
    forget() {
      seeded.clear();
    },
    async ownerChanged(kind, ownerId) {
      const keys = budgetCounterKeys(kind, ownerId, windowOf);
      for (const key of keys) seeded.delete(key);
      await gate.unseed(keys);
    },
    accountOf: (accountKey) => known.get(accountKey),
  };
}

/**
 * The gate as callers use it: where it answers that counters are not seeded (lost, or marked for
 * re-seeding), they are seeded from SQL and the operation is tried once more. A second refusal
 * reaches the caller (503 credit_check_failed). `read` and `addCredit` name only a counter: they
 * recover for accounts this instance has seeded. A top-up is not repeated: the seeding reads the
 * credited total from SQL, where it already is.
 */
export function seedingGate<Gate extends SpendGate>(gate: Gate, seeder: SpendSeeder): Gate {
  const reseedNamed = (error: UnseededAccountsError, accounts: readonly SpendAccount[]) =>
    seeder.reseed(accounts.filter((account) => error.accountKeys.includes(account.key)));
  /**
   * Runs the operation; where it answers that counters are not seeded, seeds them and runs it once
   * more. What answers at once stays so (the in-memory gate's holds); a promise gets the retry as
   * its rejection handler.
   */
  function retrying<T>(accounts: readonly SpendAccount[], operation: () => Awaitable<T>): Awaitable<T> {
    const recover = async (error: unknown): Promise<T> => {
      if (!(error instanceof UnseededAccountsError)) throw error;
      await reseedNamed(error, accounts);
      return operation();
    };
    let answer: Awaitable<T>;
    try {
      answer = operation();
    } catch (error) {
      return recover(error);
    }
    return isPromise(answer) ? answer.catch(recover) : answer;
  }
  /** `retrying` for an operation that always answers with a promise: so does the retry. */
  const retryingPromise = <T>(accounts: readonly SpendAccount[], operation: () => Promise<T>) => retrying(accounts, operation) as Promise<T>;
  return {
    ...gate,
    reserve: (reservationId, accounts, amountNanos, ttlMs) => retrying(accounts, () => gate.reserve(reservationId, accounts, amountNanos, ttlMs)),
    ...(gate.claim && {
      claim: (holdId: string, accounts: readonly SpendAccount[], minimumNanos: number, wantedNanos: number, share: number, ttlMs: number) =>
        retryingPromise(accounts, () => gate.claim!(holdId, accounts, minimumNanos, wantedNanos, share, ttlMs)),
    }),
    read: (accountKey) => retryingPromise(known(accountKey), () => gate.read(accountKey)),
    async addCredit(accountKey, amountNanos) {
      try {
        return await gate.addCredit(accountKey, amountNanos);
      } catch (error) {
        if (!(error instanceof UnseededAccountsError)) throw error;
        await reseedNamed(error, known(accountKey));
        return (await gate.read(accountKey)).creditedNanos;
      }
    },
  };

  function known(accountKey: string): SpendAccount[] {
    const account = seeder.accountOf(accountKey);
    return account ? [account] : [];
  }
}
