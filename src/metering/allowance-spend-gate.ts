import { randomUUID } from 'node:crypto';
import type { ReserveResult, SettledAccount, SpendAccount, SpendGate } from './spend-gate.js';
import { ShortLivedEntries } from '../lib/short-lived-entries.js';

export interface AllowanceSpendGateOptions {
  /** A claim holds at most 1/share of what the poorest of its accounts has left. */
  share: number;
  /** A claim is sized for this many calls like the one that made it (default: `share`). */
  callsPerClaim?: number;
  /** New calls are carved from a claim for this long after it was made (default 10 s); then a new claim is made. */
  claimLifetimeMs?: number;
  /** A claim nobody carved from for this long is given back (default 2 s). */
  idleMs?: number;
  /** How often idle and finished claims are looked for (default 1 s; 0: only when `sweepIdle` is called). */
  sweepIntervalMs?: number;
  now?: () => number;
  /**
   * False while the shared gate cannot be reached: no call is then held out of a claim, so it is
   * refused as the shared gate refuses it (503 credit_check_failed), as without allowances.
   */
  available?: () => boolean;
  onError?: (error: unknown) => void;
}

export interface AllowanceSpendGate extends SpendGate {
  reserveFromAllowance(reservationId: string, accounts: readonly SpendAccount[], amountNanos: number): boolean;
  /**
   * Carves nothing more out of the current claims (the connection to the shared gate was lost, and
   * the store may come back without them); calls running on them settle as usual.
   */
  forget(): void;
  /** Gives back the claims that are idle or too old with nothing carved out of them still running. */
  sweepIdle(): Promise<void>;
}

/** A hold on a set of accounts for several calls, and what is left of it here. */
interface Claim {
  holdId: string;
  accounts: readonly SpendAccount[];
  /** Left to carve calls from. */
  freeNanos: number;
  /** Calls carved out of it not yet settled or released. */
  running: number;
  claimedAt: number;
  lastCarvedAt: number;
  /** No more calls are carved from it; it is given back once `running` is 0. */
  retired: boolean;
}

/** A claim being made, and what the calls waiting for it want to carve out of it. */
interface ClaimOnItsWay {
  /** True once the claim holds all it asked for; false when it was cut short, refused or failed. */
  landed: Promise<boolean>;
  waitingNanos: number;
}

interface Carved {
  claim: Claim;
  amountNanos: number;
}

/** The accounts a claim is on, with the limits it was checked against: a changed budget makes a new claim. */
function accountsKey(accounts: readonly SpendAccount[]): string {
  let key = '';
  for (const account of accounts) key += `${account.key}=${account.limitNanos ?? ''};`;
  return key;
}

/**
 * Credit holds shared by several instances without a round trip on every call. A call that finds no
 * claim of this instance's on its accounts makes one: a hold (in the shared gate) for up to
 * `callsPerClaim` calls like it, capped at 1/share of what the poorest account has left and never
 * less than the call's own estimate, so near an account's end it is exactly the call's hold. The
 * calls after it are held out of that claim here, at once. Each call still settles on its own
 * (`draw`, which moves its part of the claim into spend at the actual cost), so budgets, alerts and
 * the shared totals stay per call. Nothing can overspend: the whole claim counts as reserved in the
 * shared gate until it is drawn or given back. What it costs is that credit held by one instance's
 * claim is not available to the others until it is used or given back (after `idleMs` without a
 * call, or once `claimLifetimeMs` has passed and its calls are done); a claim of an instance that
 * died is released by the sweeper past its deadline, as any hold.
 */
export function createAllowanceSpendGate(shared: SpendGate, options: AllowanceSpendGateOptions): AllowanceSpendGate {
  const claimOf = shared.claim?.bind(shared);
  const drawOf = shared.draw?.bind(shared);
  if (!claimOf || !drawOf) throw new Error('the shared spend gate cannot hold credit for several calls (claim, draw)');
  const { share } = options;
  const callsPerClaim = options.callsPerClaim ?? share;
  const lifetimeMs = options.claimLifetimeMs ?? 10_000;
  const idleMs = options.idleMs ?? 2_000;
  const now = options.now ?? Date.now;
  const available = options.available ?? (() => true);
  const report = options.onError ?? (() => {});
  const instance = randomUUID();
  let claimsMade = 0;
  /** The claim new calls are carved from, per set of accounts. */
  const current = new Map<string, Claim>();
  // One a call, gone when the call settles (see ShortLivedEntries).
  const carved = new ShortLivedEntries<string, Carved>();
  /** Per set of accounts, the claim on its way, if any. */
  const claiming = new Map<string, ClaimOnItsWay>();

  /** Claims whose release failed (the shared gate away): retried on every sweep, so they do not wait for the hold's deadline. */
  const unreleased = new Set<string>();
  const release = (holdId: string): Promise<void> =>
    shared.release(holdId).then(
      () => void unreleased.delete(holdId),
      (error: unknown) => {
        if (!unreleased.has(holdId)) report(error);
        unreleased.add(holdId);
      },
    );
  const giveBack = (claim: Claim): Promise<void> => release(claim.holdId);
  let returnsMade = 0;
  const retire = (claim: Claim): Promise<void> | undefined => {
    claim.retired = true;
    if (claim.running === 0) return giveBack(claim);
    // Its calls still running keep their parts; what nobody took is given back now, not when the
    // last of them ends (a long stream would otherwise keep the whole claim reserved).
    const unused = claim.freeNanos;
    if (unused <= 0) return undefined;
    claim.freeNanos = 0;
    return drawOf(claim.holdId, `unused:${instance}:${++returnsMade}`, claim.accounts, unused, 0).then(
      () => undefined,
      (error: unknown) => report(error),
    );
  };
  const retireIfCurrent = (claim: Claim) => {
    const key = accountsKey(claim.accounts);
    if (current.get(key) !== claim) return;
    current.delete(key);
    void retire(claim);
  };
  /** The call no longer runs on its claim. */
  const finish = (entry: Carved) => {
    const { claim } = entry;
    claim.running--;
    if (claim.retired && claim.running === 0) void giveBack(claim);
  };
  const carve = (reservationId: string, claim: Claim, amountNanos: number, at: number) => {
    claim.freeNanos -= amountNanos;
    claim.running++;
    claim.lastCarvedAt = at;
    carved.set(reservationId, { claim, amountNanos });
  };

  async function sweepIdle(): Promise<void> {
    const at = now();
    const releases: Array<Promise<void> | undefined> = [...unreleased].map(release);
    for (const [key, claim] of current) {
      if (at - claim.lastCarvedAt < idleMs && at - claim.claimedAt < lifetimeMs) continue;
      current.delete(key);
      releases.push(retire(claim));
    }
    await Promise.all(releases);
  }
  const interval = options.sweepIntervalMs ?? 1_000;
  const timer = interval > 0 ? setInterval(() => void sweepIdle(), interval) : undefined;
  timer?.unref();

  function reserveFromAllowance(reservationId: string, accounts: readonly SpendAccount[], amountNanos: number): boolean {
    const claim = current.get(accountsKey(accounts));
    if (claim === undefined || claim.freeNanos < amountNanos || !available()) return false;
    const at = now();
    if (at - claim.claimedAt >= lifetimeMs) return false;
    carve(reservationId, claim, amountNanos, at);
    return true;
  }

  /**
   * Makes a claim on the accounts, sized for `callsPerClaim` calls like this one plus `backlogNanos`
   * (what calls already waiting want), and holds the call out of it; refused as `reserve` refuses
   * when even the call's own estimate is not covered. `plenty`: the claim got all it asked for.
   */
  async function claimFor(
    reservationId: string,
    accounts: readonly SpendAccount[],
    amountNanos: number,
    ttlMs: number,
    key: string,
    backlogNanos: number,
  ): Promise<{ result: ReserveResult; plenty: boolean }> {
    const holdId = `claim:${instance}:${++claimsMade}`;
    const wanted = amountNanos * callsPerClaim + backlogNanos;
    let result;
    try {
      // The claim lives as long as a call carved at its very end may run.
      result = await claimOf!(holdId, accounts, amountNanos, wanted, share, ttlMs + lifetimeMs);
    } catch (error) {
      // Its reply may be lost with the hold in place: given back once the store answers.
      unreleased.add(holdId);
      throw error;
    }
    if (!result.ok) return { result, plenty: false };
    const at = now();
    const claim: Claim = { holdId, accounts, freeNanos: result.grantedNanos, running: 0, claimedAt: at, lastCarvedAt: at, retired: false };
    const replaced = current.get(key);
    current.set(key, claim);
    if (replaced) void retire(replaced);
    carve(reservationId, claim, amountNanos, at);
    return { result: { ok: true }, plenty: result.grantedNanos >= wanted };
  }

  return {
    ...shared,
    reserveFromAllowance,

    async reserve(reservationId, accounts, amountNanos, ttlMs): Promise<ReserveResult> {
      if (reserveFromAllowance(reservationId, accounts, amountNanos)) return { ok: true };
      const key = accountsKey(accounts);
      // One claim at a time per set of accounts, and the calls that find one on its way wait for it:
      // a burst (the calls of a stall arriving at once) would otherwise make a claim each, every
      // claim retiring the one before, several round trips a call where one claim serves them all.
      // A waiter the claim does not cover makes the next one, sized for every call still waiting.
      let backlogNanos = 0;
      for (let onItsWay = claiming.get(key); onItsWay !== undefined; onItsWay = claiming.get(key)) {
        onItsWay.waitingNanos += amountNanos;
        const plenty = await onItsWay.landed;
        onItsWay.waitingNanos -= amountNanos;
        if (reserveFromAllowance(reservationId, accounts, amountNanos)) return { ok: true };
        // Cut short (near an account's end), refused or failed: a claim more would be cut short
        // too, so each call is decided on its own, exactly, as without allowances.
        if (!plenty) return shared.reserve(reservationId, accounts, amountNanos, ttlMs);
        backlogNanos = onItsWay.waitingNanos;
      }
      let landed!: (plenty: boolean) => void;
      const onItsWay: ClaimOnItsWay = { landed: new Promise<boolean>((resolve) => (landed = resolve)), waitingNanos: 0 };
      claiming.set(key, onItsWay);
      let plenty = false;
      try {
        const made = await claimFor(reservationId, accounts, amountNanos, ttlMs, key, backlogNanos);
        plenty = made.plenty;
        return made.result;
      } finally {
        // Gone before the waiters wake, so one the claim does not cover makes the next.
        if (claiming.get(key) === onItsWay) claiming.delete(key);
        landed(plenty);
      }
    },

    async settle(reservationId, accounts, actualNanos, settleOptions): Promise<SettledAccount[]> {
      const entry = carved.get(reservationId);
      if (entry === undefined) return shared.settle(reservationId, accounts, actualNanos, settleOptions);
      // Kept until the draw lands: a replay after a failure must find it (the draw is counted once).
      const settled = await drawOf(entry.claim.holdId, reservationId, accounts, entry.amountNanos, actualNanos, settleOptions);
      if (carved.delete(reservationId)) finish(entry);
      // A cost above its hold was spent beyond what the claim accounted for: the accounts may now be
      // used up, so no more calls are carved from it unchecked; the next one asks the shared gate.
      if (actualNanos > entry.amountNanos) retireIfCurrent(entry.claim);
      return settled;
    },

    async release(reservationId) {
      const entry = carved.get(reservationId);
      if (entry === undefined) return shared.release(reservationId);
      carved.delete(reservationId);
      entry.claim.freeNanos += entry.amountNanos;
      finish(entry);
    },

    sweepIdle,

    forget() {
      for (const claim of current.values()) void retire(claim);
      current.clear();
    },

    async close() {
      if (timer) clearInterval(timer);
      await Promise.all([...current.values()].map(retire));
      current.clear();
      await shared.close();
    },
  };
}
