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
  /** Milliseconds until the current fixed window ends (the OpenAI-style reset header). */
  resetMs: number;
  /** Milliseconds until this call would fit, when it does not now. */
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
  /** Corrects a count made at `atMs` by `delta` (actual − estimate); ignored once that window has passed. */
  adjust(key: string, windowMs: number, atMs: number, delta: number): Promise<void>;
  close(): Promise<void>;
}

/** The state of one limit given its two window counts (after adding `added`, if the call was counted). */
export function windowState(limit: WindowLimit, now: number, current: number, previous: number, counted: boolean): WindowState {
  const { windowMs } = limit;
  const intoWindow = now % windowMs;
  const overlap = 1 - intoWindow / windowMs;
  const used = previous * overlap + current;
  const resetMs = windowMs - intoWindow;
  const remaining = Math.max(0, Math.floor(limit.limit - used));
  let retryAfterMs = 0;
  if (!counted) {
    const room = limit.limit - limit.amount;
    if (room < 0) retryAfterMs = windowMs;
    else if (current <= room) {
      // Wait for the previous window's weight to fall: previous × (1 − f) ≤ room − current.
      const fraction = previous > 0 ? 1 - (room - current) / previous : 0;
      retryAfterMs = Math.max(1, Math.ceil(fraction * windowMs - intoWindow));
    } else {
      // The current window alone is too full: wait into the next one until its weight has fallen.
      const fraction = current > 0 ? 1 - room / current : 0;
      retryAfterMs = Math.max(1, Math.ceil(resetMs + fraction * windowMs));
    }
  }
  return { limit: limit.limit, remaining, resetMs, retryAfterMs };
}

/** True when the call fits: the weighted count plus its amount stays within the limit. */
export function fits(limit: WindowLimit, now: number, current: number, previous: number): boolean {
  const overlap = 1 - (now % limit.windowMs) / limit.windowMs;
  return previous * overlap + current + limit.amount <= limit.limit;
}
