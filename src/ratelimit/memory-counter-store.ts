import { fits, windowState, type CounterStore, type HitResult, type WindowLimit, type WindowState } from './counter-store.js';

interface Counter {
  window: number;
  current: number;
  previous: number;
}

/** Moves a counter to the window containing `window`, keeping the last one as "previous". */
function roll(counter: Counter, window: number): void {
  if (counter.window === window) return;
  counter.previous = counter.window === window - 1 ? counter.current : 0;
  counter.current = 0;
  counter.window = window;
}

/**
 * In-process CounterStore: one small object per counter, updated in place, O(limits) per call.
 * A timer drops counters idle for two windows so the map does not grow with every key and user.
 */
export function createMemoryCounterStore(options: { sweepIntervalMs?: number; now?: () => number } = {}): CounterStore {
  const counters = new Map<string, Counter & { windowMs: number }>();
  const now = options.now ?? Date.now;
  const interval = options.sweepIntervalMs ?? 60_000;
  const timer =
    interval > 0
      ? setInterval(() => {
          const time = now();
          for (const [key, counter] of counters) {
            if (Math.floor(time / counter.windowMs) - counter.window > 1) counters.delete(key);
          }
        }, interval)
      : undefined;
  timer?.unref();

  function hitNow(limits: readonly WindowLimit[], time: number): HitResult {
    let blockedIndex = -1;
    const entries: Counter[] = new Array(limits.length);
    for (let index = 0; index < limits.length; index++) {
      const limit = limits[index];
      const window = Math.floor(time / limit.windowMs);
      let counter = counters.get(limit.key);
      if (!counter) {
        counter = { window, current: 0, previous: 0, windowMs: limit.windowMs };
        counters.set(limit.key, counter);
      } else roll(counter, window);
      entries[index] = counter;
      if (blockedIndex < 0 && !fits(limit, time, counter.current, counter.previous)) blockedIndex = index;
    }
    const allowed = blockedIndex < 0;
    const states: WindowState[] = new Array(limits.length);
    for (let index = 0; index < limits.length; index++) {
      const counter = entries[index];
      if (allowed) counter.current += limits[index].amount;
      states[index] = windowState(limits[index], time, counter.current, counter.previous, allowed);
    }
    return { allowed, blockedIndex, states };
  }

  return {
    hitNow,
    hit: async (limits, time) => hitNow(limits, time),
    adjust(key, windowMs, atMs, delta) {
      const counter = counters.get(key);
      if (!counter || delta === 0) return;
      const window = Math.floor(atMs / windowMs);
      if (counter.window === window) counter.current = Math.max(0, counter.current + delta);
      else if (counter.window === window + 1) counter.previous = Math.max(0, counter.previous + delta);
    },
    async close() {
      if (timer) clearInterval(timer);
    },
  };
}
