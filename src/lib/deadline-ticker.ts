/**
 * Deadlines that almost never expire (an attempt's total time, a stream's first byte) kept on one
 * shared ticker instead of a Node timer each.
 *
 * Why: Node keeps one timer list per duration. An attempt's total timer is capped by the time its
 * request has left, so its duration is new on nearly every call: each call made a list, put it in
 * the timer queue, and took it out again when the timer was cleared a fraction of a millisecond
 * later. Here a deadline is a number in an array, and cancelling it is a flag.
 *
 * The price is precision: a deadline of `COARSE_FROM_MS` or more expires up to `TICK_MS` late
 * (10% at one second, far less on the minutes-long timeouts it serves). Shorter ones keep a Node
 * timer of their own, exact as before. Like a Node timer, a deadline keeps the process alive until
 * it expires or is cancelled, unless it is unref'd.
 */
export interface Deadline {
  /** Never expires after this. */
  cancel(): void;
  /** No longer keeps the process alive on its own; it still expires on time. */
  unref(): void;
}

/** Deadlines this long or longer go on the shared ticker. */
export const COARSE_FROM_MS = 1_000;
/** How often the ticker looks for expired deadlines: the most a coarse deadline is late by. */
export const TICK_MS = 100;

class CoarseDeadline implements Deadline {
  refed = true;
  constructor(
    readonly dueAt: number,
    public onExpire: (() => void) | undefined,
  ) {}

  cancel(): void {
    if (this.onExpire === undefined) return;
    // Dropped from the array at the next tick; the callback (and what it holds) is let go now.
    this.onExpire = undefined;
    if (this.refed) releaseRef();
  }

  unref(): void {
    if (this.onExpire === undefined || !this.refed) return;
    this.refed = false;
    releaseRef();
  }
}

class ExactDeadline implements Deadline {
  constructor(private readonly timer: NodeJS.Timeout) {}
  cancel(): void {
    clearTimeout(this.timer);
  }
  unref(): void {
    this.timer.unref();
  }
}

let pending: CoarseDeadline[] = [];
let refedCount = 0;
let ticker: NodeJS.Timeout | undefined;

/** Calls `onExpire` once, `ms` from now (later by up to TICK_MS when `ms` ≥ COARSE_FROM_MS), unless cancelled first. */
export function startDeadline(ms: number, onExpire: () => void): Deadline {
  if (!(ms >= COARSE_FROM_MS)) return new ExactDeadline(setTimeout(onExpire, ms));
  const deadline = new CoarseDeadline(performance.now() + ms, onExpire);
  pending.push(deadline);
  if (ticker === undefined) ticker = setInterval(tick, TICK_MS);
  if (refedCount++ === 0) ticker.ref();
  return deadline;
}

function releaseRef(): void {
  if (--refedCount === 0) ticker?.unref();
}

function tick(): void {
  const now = performance.now();
  const due = pending;
  pending = [];
  const expired: Array<() => void> = [];
  for (const deadline of due) {
    const onExpire = deadline.onExpire;
    if (onExpire === undefined) continue;
    if (deadline.dueAt > now) {
      pending.push(deadline);
      continue;
    }
    deadline.cancel();
    expired.push(onExpire);
  }
  // With nothing left to watch the ticker stops; the next deadline starts it again.
  if (pending.length === 0) {
    clearInterval(ticker);
    ticker = undefined;
  }
  // Called after the bookkeeping, so a callback that starts or cancels deadlines finds it consistent.
  let firstError: unknown;
  for (const onExpire of expired) {
    try {
      onExpire();
    } catch (error) {
      firstError ??= error;
    }
  }
  if (firstError !== undefined) throw firstError;
}

/** Deadlines on the ticker not yet expired or cancelled, and whether the ticker runs (for tests). */
export function tickerState(): { live: number; refed: number; running: boolean } {
  return { live: pending.filter((deadline) => deadline.onExpire !== undefined).length, refed: refedCount, running: ticker !== undefined };
}
