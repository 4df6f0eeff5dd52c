import { UnseededAccountsError, type AccountState, type ReserveResult, type SettledAccount, type SpendAccount, type SpendGate } from './spend-gate.js';
import { ShortLivedEntries } from '../lib/short-lived-entries.js';

interface Counter {
  spent: number;
  reserved: number;
  credited: number;
  /** False once `unseed` marked it: unusable until seeded again (a process's own counters are never lost). */
  seeded: boolean;
  /** 0 = never. */
  expiresAt: number;
}

interface Hold {
  amount: number;
  counters: Counter[];
  deadline: number;
  /** Claims only: the draw ids already settled out of it. */
  draws?: Set<string>;
}

export interface MemorySpendGateOptions {
  now?: () => number;
  /** How often holds past their deadline and counters of past periods are dropped; 0 disables the timer. */
  sweepIntervalMs?: number;
}

/**
 * SpendGate for one process. JavaScript runs each method to completion, so check-and-hold over
 * several accounts is atomic without locks; the methods are async only to share the interface.
 * O(accounts) per call.
 */
export function createMemorySpendGate(options: MemorySpendGateOptions = {}): SpendGate {
  const now = options.now ?? Date.now;
  const counters = new Map<string, Counter>();
  const markers = new Map<string, number>();
  // One hold a call, gone when the call settles: kept so that this churn makes no old-generation garbage.
  const holds = new ShortLivedEntries<string, Hold>();

  function counter(key: string, expiresAt: number): Counter {
    let entry = counters.get(key);
    if (!entry) {
      entry = { spent: 0, reserved: 0, credited: 0, seeded: true, expiresAt };
      counters.set(key, entry);
    }
    return entry;
  }

  /** The counters of the accounts, created where missing; throws for those marked unseeded. */
  function seededCounters(accounts: readonly SpendAccount[]): Counter[] {
    const entries = accounts.map((account) => counter(account.key, account.expiresAt));
    const unseeded = accounts.filter((_, index) => !entries[index].seeded).map((account) => account.key);
    if (unseeded.length > 0) throw new UnseededAccountsError(unseeded);
    return entries;
  }

  /** Adds the actual cost to every account's spend; answers what a settlement answers. */
  function addSpend(accounts: readonly SpendAccount[], actualNanos: number): SettledAccount[] {
    const settled: SettledAccount[] = new Array(accounts.length);
    for (let index = 0; index < accounts.length; index++) {
      const account = accounts[index];
      const entry = counter(account.key, account.expiresAt);
      // Seeding from the ledger counts this cost.
      if (!entry.seeded) {
        settled[index] = { spentNanos: 0, limitNanos: 0 };
        continue;
      }
      entry.spent += actualNanos;
      settled[index] = { spentNanos: entry.spent, limitNanos: account.limitNanos ?? entry.credited };
    }
    return settled;
  }

  function drop(hold: Hold): void {
    for (const entry of hold.counters) entry.reserved = Math.max(0, entry.reserved - hold.amount);
  }

  async function sweepExpired(): Promise<number> {
    const time = now();
    let released = 0;
    for (const [id, hold] of holds.list()) {
      if (hold.deadline > time) continue;
      drop(hold);
      holds.delete(id);
      released++;
    }
    for (const [key, entry] of counters) {
      if (entry.expiresAt !== 0 && entry.expiresAt <= time && entry.reserved === 0) counters.delete(key);
    }
    for (const [marker, expiresAt] of markers) if (expiresAt <= time) markers.delete(marker);
    return released;
  }

  const interval = options.sweepIntervalMs ?? 30_000;
  const timer = interval > 0 ? setInterval(() => void sweepExpired(), interval) : undefined;
  timer?.unref();

  return {
    reserve(reservationId, accounts, amountNanos, ttlMs): ReserveResult {
      const held = seededCounters(accounts);
      for (let index = 0; index < accounts.length; index++) {
        const account = accounts[index];
        const entry = held[index];
        const limit = account.limitNanos ?? entry.credited;
        const available = limit - entry.spent - entry.reserved;
        // An account at its limit is blocked even for a call estimated at zero (SPEC: "a key at its budget is blocked").
        if (amountNanos > available || available <= 0) return { ok: false, index, availableNanos: Math.max(0, available) };
      }
      for (const entry of held) entry.reserved += amountNanos;
      holds.set(reservationId, { amount: amountNanos, counters: held, deadline: now() + ttlMs });
      return { ok: true };
    },
    async claim(holdId, accounts, minimumNanos, wantedNanos, share, ttlMs) {
      const held = seededCounters(accounts);
      let least = Infinity;
      for (let index = 0; index < accounts.length; index++) {
        const account = accounts[index];
        const entry = held[index];
        const available = (account.limitNanos ?? entry.credited) - entry.spent - entry.reserved;
        if (minimumNanos > available || available <= 0) return { ok: false, index, availableNanos: Math.max(0, available) };
        least = Math.min(least, available);
      }
      const grantedNanos = Math.max(minimumNanos, Math.min(wantedNanos, Math.floor(least / share)));
      for (const entry of held) entry.reserved += grantedNanos;
      holds.set(holdId, { amount: grantedNanos, counters: held, deadline: now() + ttlMs, draws: new Set() });
      return { ok: true, grantedNanos };
    },
    async draw(holdId, drawId, accounts, heldNanos, actualNanos, options) {
      const hold = holds.get(holdId);
      if (!hold && options?.onlyIfHeld) return [];
      if (hold) {
        if (hold.draws?.has(drawId)) return [];
        hold.draws?.add(drawId);
        hold.amount -= heldNanos;
        for (const entry of hold.counters) entry.reserved = Math.max(0, entry.reserved - heldNanos);
      }
      return addSpend(accounts, actualNanos);
    },
    async settle(reservationId, accounts, actualNanos, options) {
      const hold = holds.get(reservationId);
      if (!hold && options?.onlyIfHeld) return [];
      if (hold) {
        drop(hold);
        holds.delete(reservationId);
      }
      return addSpend(accounts, actualNanos);
    },
    async release(reservationId) {
      const hold = holds.get(reservationId);
      if (!hold) return;
      drop(hold);
      holds.delete(reservationId);
    },
    async addCredit(accountKey, amountNanos) {
      const entry = counter(accountKey, 0);
      if (!entry.seeded) throw new UnseededAccountsError([accountKey]);
      entry.credited += amountNanos;
      return entry.credited;
    },
    async read(accountKey): Promise<AccountState> {
      const entry = counters.get(accountKey);
      if (entry && !entry.seeded) throw new UnseededAccountsError([accountKey]);
      return { spentNanos: entry?.spent ?? 0, reservedNanos: entry?.reserved ?? 0, creditedNanos: entry?.credited ?? 0 };
    },
    async seed(account, state) {
      const entry = counters.get(account.key);
      if (entry === undefined) {
        counters.set(account.key, { spent: state.spentNanos, reserved: 0, credited: state.creditedNanos ?? 0, seeded: true, expiresAt: account.expiresAt });
      } else if (!entry.seeded) {
        // Changed in place: the holds still running on it refer to it, and keep their reserved amount.
        Object.assign(entry, { spent: state.spentNanos, credited: state.creditedNanos ?? 0, seeded: true, expiresAt: account.expiresAt });
      }
    },
    async unseed(accountKeys) {
      for (const key of accountKeys) {
        const entry = counters.get(key);
        if (entry) entry.seeded = false;
      }
    },
    async claimOnce(marker, ttlMs) {
      const time = now();
      const expiresAt = markers.get(marker);
      if (expiresAt !== undefined && expiresAt > time) return false;
      markers.set(marker, time + ttlMs);
      return true;
    },
    sweepExpired,
    async close() {
      if (timer) clearInterval(timer);
    },
  };
}
