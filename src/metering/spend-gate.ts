import type { Awaitable } from '../lib/awaitable.js';
import type { BudgetPeriod } from '../tenancy/tenancy-types.js';

export type AccountKind = 'credit' | 'org' | 'team' | 'key' | 'user';

/**
 * One account a call is charged to, in one period bucket. The gate reads only `key`, `limitNanos`
 * and `expiresAt`; the rest is for seeding from SQL and for threshold events.
 */
export interface SpendAccount {
  /** Counter name, unique per account and period, e.g. "key:<id>:m2025-07". */
  readonly key: string;
  readonly kind: AccountKind;
  /** The budget limit; null for the credit account, whose limit is the credited total held in the gate. */
  readonly limitNanos: number | null;
  /** Epoch ms after which the counter may be dropped (a past period); 0 = never. */
  readonly expiresAt: number;
  readonly orgId: string;
  /** org, team or key id the account belongs to. */
  readonly ownerId: string;
  readonly user?: string;
  readonly period: BudgetPeriod;
  readonly periodStartMs: number;
  readonly thresholds: readonly number[];
  /**
   * A counter started because its budget was set again mid-period (a per-user budget's generation):
   * its seeding first writes this instance's queued spend to SQL, since the calls just made
   * without the budget count towards it.
   */
  readonly setAgain?: boolean;
}

export interface AccountState {
  spentNanos: number;
  reservedNanos: number;
  /** Credited total (credit accounts); 0 elsewhere. */
  creditedNanos: number;
}

export type ReserveResult =
  | { ok: true }
  /** `index` is the first account that could not cover the amount; `availableNanos` what it had left. */
  | { ok: false; index: number; availableNanos: number };

export type ClaimResult = { ok: true; grantedNanos: number } | { ok: false; index: number; availableNanos: number };

/** Per account, in the order given: spent after the settlement, and the limit it was held to. */
export interface SettledAccount {
  spentNanos: number;
  limitNanos: number;
}

/**
 * A counter the gate cannot use until it is seeded from SQL: never seeded, marked by `unseed`, or
 * lost by the store (Redis restarted empty, flushed or evicted it). `reserve`, `claim`, `read` and
 * `addCredit` throw it before changing anything; spend-seeder.ts seeds the counters and tries once more.
 */
export class UnseededAccountsError extends Error {
  constructor(readonly accountKeys: readonly string[]) {
    super(`spend counters not seeded: ${accountKeys.join(', ')}`);
    this.name = 'UnseededAccountsError';
  }
}

/**
 * The atomic counters behind credits and budgets. `reserve` checks every account and holds the
 * amount on all of them, or on none; `settle` turns a hold into spend at the actual cost; `release`
 * drops a hold. Holds carry a deadline and `sweepExpired` releases the ones left behind by a dead
 * instance. Implementations: memory-spend-gate.ts (one process) and redis-spend-gate.ts (Lua).
 * Amounts are integer nano-USD.
 */
export interface SpendGate {
  /**
   * The in-memory gate answers at once, without a promise (every metered call takes a hold), and
   * throws UnseededAccountsError at once too; a shared store answers with a promise.
   */
  reserve(reservationId: string, accounts: readonly SpendAccount[], amountNanos: number, ttlMs: number): Awaitable<ReserveResult>;
  /**
   * Holds `amountNanos` for the call at once out of credit this instance already holds for several
   * calls on exactly these accounts (allowance-spend-gate.ts); false when it holds none that covers
   * it, and `reserve` decides. Never refuses.
   */
  reserveFromAllowance?(reservationId: string, accounts: readonly SpendAccount[], amountNanos: number): boolean;
  /**
   * `onlyIfHeld` (a replayed settlement): do nothing and return [] unless the hold still exists, so a
   * replay of a settlement that did land, or that the ledger already re-seeded, is not counted twice.
   * An unseeded counter (lost by the store) is left as it is, answered as { spentNanos: 0, limitNanos: 0 }:
   * the ledger has the spend, and seeding counts it.
   */
  settle(reservationId: string, accounts: readonly SpendAccount[], actualNanos: number, options?: { onlyIfHeld?: boolean }): Promise<SettledAccount[]>;
  release(reservationId: string): Promise<void>;
  /**
   * A hold for several calls (allowance-spend-gate.ts): like `reserve`, refused unless every
   * account can cover `minimumNanos`; otherwise holds on all of them the least of `wantedNanos`
   * and 1/`share` of what the poorest account has left, but never less than `minimumNanos`, and
   * says how much. Released with `release(holdId)`.
   */
  claim?(holdId: string, accounts: readonly SpendAccount[], minimumNanos: number, wantedNanos: number, share: number, ttlMs: number): Promise<ClaimResult>;
  /**
   * Settles one call carved out of a claim: `heldNanos` leaves the claim's hold and the accounts'
   * reserved totals, `actualNanos` is added to their spend. Counted once per `drawId`: a replay
   * returns []. When the claim's hold is gone (swept), the spend is still added unless `onlyIfHeld`.
   */
  draw?(holdId: string, drawId: string, accounts: readonly SpendAccount[], heldNanos: number, actualNanos: number, options?: { onlyIfHeld?: boolean }): Promise<SettledAccount[]>;
  /**
   * Adds to a credit account's credited total (a top-up) and returns the new total. On an unseeded
   * counter it adds nothing and throws UnseededAccountsError: seeding reads the credited total from
   * SQL, where the top-up already is.
   */
  addCredit(accountKey: string, amountNanos: number): Promise<number>;
  read(accountKey: string): Promise<AccountState>;
  /**
   * Sets spent (and credited) only where the counter is not seeded yet, so instances seeding at once
   * cannot clobber live counts. An unseeded counter's spent and credited are replaced; what is
   * reserved on it (holds still running) is kept.
   */
  seed(account: Pick<SpendAccount, 'key' | 'expiresAt'>, state: { spentNanos: number; creditedNanos?: number }): Promise<void>;
  /**
   * Marks counters unseeded (a budget was set again, and its counter missed the spend made while it
   * was not): the next `reserve`, `claim` or `read` of them throws UnseededAccountsError, and `seed`
   * replaces their spent. What is reserved on them is kept.
   */
  unseed(accountKeys: readonly string[]): Promise<void>;
  /** True exactly once per marker until `ttlMs` passes: dedupes threshold events across instances. */
  claimOnce(marker: string, ttlMs: number): Promise<boolean>;
  /** Releases holds past their deadline; returns how many. */
  sweepExpired(): Promise<number>;
  close(): Promise<void>;
}
