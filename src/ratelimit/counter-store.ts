import type { Awaitable } from '../lib/awaitable.js';

/**
 * Rate-limit counters: a sliding window per limit, computed with the two-window approximation
 * (the count of the previous fixed window weighted by how much of it still overlaps the sliding
 * window, plus the current window's count). It needs two integers per limit, is O(1) per check, and
 * never lets a burst at a window boundary double the limit, unlike a fixed window
 * (docs/rate-limits.md). Implementations: memory-counter-store.ts, redis-counter-store.ts (Lua).
 */
export interface WindowLimit {
  /** Counter name, e.g. "rpm:<keyId>". */
  key: string;
  limit: number;
  windowMs: number;
  /** Units this call adds: 1 for a request, estimated tokens for TPM (0 only checks). */
  amount: number;
}

export interface WindowState {
  limit: number;
  /** Left after this call (or now, if it was refused). */
  remaining: number;
  /**
   * Milliseconds until a request like this one (one request; this call's tokens) would next be
   * admitted: 0 while it would be now. The x-ratelimit-reset-* headers (docs/rate-limits.md); on a
   * refusal it is the wait Retry-After gives, to the millisecond.
   */
  resetMs: number;
  /** Milliseconds until this call would fit, when it was refused (else 0). */
  retryAfterMs: number;
}

export interface HitResult {
  allowed: boolean;
  /** Index of the first limit that refused the call, or -1. */
  blockedIndex: number;
  states: WindowState[];
}

export interface CounterStore {
  /** Checks every limit and, only if all allow it, counts the call in all of them (atomic). */
  hit(limits: readonly WindowLimit[], now: number): Promise<HitResult>;
  /**
   * The same as `hit`, answered at once, by a store that holds its counters in this process.
   * Lets the rate-limit stage decide on the spot instead of through a promise joined to the
   * call's admission (rate-limit-stage.ts).
   */
  hitNow?(limits: readonly WindowLimit[], now: number): HitResult;
  /**
   * Answers at once, and counts the call, when the room this instance holds covers every limit
   * (allowance-counter-store.ts); undefined when only `hit` can decide. Never refuses.
   */
  hitFromAllowance?(limits: readonly WindowLimit[], now: number): HitResult | undefined;
  /**
   * The time this store reckons its windows in at the caller's instant `now`: a shared store's
   * clock, not this process's (redis-clock.ts). Absent: `now` itself. `hit` and `adjust` take the
   * caller's time and convert it themselves; this is for callers that keep windows of their own.
   */
  storeTime?(now: number): number;
  /**
   * Corrects a count made at `atMs` by `delta` (actual − estimate); ignored once that window has
   * passed. The in-memory store corrects at once, without a promise (every metered call makes one).
   */
  adjust(key: string, windowMs: number, atMs: number, delta: number): Awaitable<void>;
  close(): Promise<void>;
}

/** The state of one limit given its two window counts (the call included, if it was counted). */
export function windowState(limit: WindowLimit, now: number, current: number, previous: number, counted: boolean): WindowState {
  const { windowMs } = limit;
  const used = previous * (1 - (now % windowMs) / windowMs) + current;
  const remaining = Math.max(0, Math.floor(limit.limit - used));
  // A call that counts nothing in this window (a request without tokens) is read as one unit.
  const wait = msUntilFits(limit.limit, windowMs, Math.max(1, limit.amount), now, current, previous);
  return { limit: limit.limit, remaining, resetMs: wait, retryAfterMs: counted ? 0 : wait };
}

/**
 * Milliseconds until `amount` more fits under `limit`, if nothing else is counted meanwhile: 0 if
 * it fits now. The weighted count only falls as the previous window's weight does, so the end of
 * the current fixed window is not the answer: a full current window still weighs (nearly) all
 * of its count right after it ends, and is only forgotten over the window after it.
 */
export function msUntilFits(limit: number, windowMs: number, amount: number, now: number, current: number, previous: number): number {
  const intoWindow = now % windowMs;
  if (weighted(now, windowMs, current, previous) + amount <= limit) return 0;
  const room = limit - amount;
  // Never, whatever the wait (the rate-limit stage refuses such a call with a 400 before counting).
  if (room < 0) return windowMs;
  // The exact moment, in whole-number arithmetic as far as it goes: in this window once
  // previous × (1 − f) ≤ room − current; else in the next, once current × (1 − f) ≤ room.
  const exact =
    current <= room
      ? windowMs - ((room - current) * windowMs) / previous - intoWindow
      : 2 * windowMs - intoWindow - (room * windowMs) / current;
  let wait = Math.max(1, Math.ceil(exact));
  // The admission compares in floating point (fits()), which may land a hair above the limit at
  // the exact moment: the wait is the first millisecond it admits, found in a step or two.
  const start = now - intoWindow;
  for (let step = 0; step < 8; step++) {
    const at = now + wait;
    const windowsLater = Math.floor((at - start) / windowMs);
    const later = windowsLater === 0 ? weighted(at, windowMs, current, previous) : windowsLater === 1 ? weighted(at, windowMs, 0, current) : 0;
    if (later + amount <= limit) break;
    wait++;
  }
  return wait;
}

/** The sliding-window count at `time`: the previous window weighted by its overlap, plus the current one (as fits() reckons it). */
function weighted(time: number, windowMs: number, current: number, previous: number): number {
  const overlap = 1 - (time % windowMs) / windowMs;
  return previous * overlap + current;
}

/** True when the call fits: the weighted count plus its amount stays within the limit. */
export function fits(limit: WindowLimit, now: number, current: number, previous: number): boolean {
  const overlap = 1 - (now % limit.windowMs) / limit.windowMs;
  return previous * overlap + current + limit.amount <= limit.limit;
}
