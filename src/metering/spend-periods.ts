import type { BudgetPeriod } from '../tenancy/tenancy-types.js';

/** A budget period bucket: `id` names it in counter keys; periods are UTC, weeks start on Monday (ISO 8601). */
export interface PeriodWindow {
  id: string;
  startMs: number;
  /** 0 for the unbounded period. */
  endMs: number;
}

/** Every budget period begins and ends on a UTC day boundary, a multiple of this. */
export const DAY_MS = 86_400_000;

const pad = (value: number) => String(value).padStart(2, '0');
const isoDate = (ms: number) => {
  const date = new Date(ms);
  return `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
};

export function periodWindow(period: BudgetPeriod, now: number): PeriodWindow {
  const dayStart = Math.floor(now / DAY_MS) * DAY_MS;
  switch (period) {
    case 'daily':
      return { id: `d${isoDate(dayStart)}`, startMs: dayStart, endMs: dayStart + DAY_MS };
    case 'weekly': {
      // 1970-01-01 was a Thursday: shift so that weeks begin on Monday.
      const weekday = (Math.floor(now / DAY_MS) + 3) % 7;
      const start = dayStart - weekday * DAY_MS;
      return { id: `w${isoDate(start)}`, startMs: start, endMs: start + 7 * DAY_MS };
    }
    case 'monthly': {
      const date = new Date(now);
      const start = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
      const end = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
      return { id: `m${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}`, startMs: start, endMs: end };
    }
    default:
      return { id: 'all', startMs: 0, endMs: 0 };
  }
}

/**
 * Period windows for "now", recomputed only when the day changes (every period boundary is a day
 * boundary), so the hot path does no date arithmetic.
 */
export function createPeriodClock(now: () => number = Date.now): (period: BudgetPeriod) => PeriodWindow {
  let validUntil = -1;
  let windows: Record<BudgetPeriod, PeriodWindow> | undefined;
  return (period) => {
    const time = now();
    if (!windows || time >= validUntil || time < validUntil - DAY_MS) {
      windows = {
        none: periodWindow('none', time),
        daily: periodWindow('daily', time),
        weekly: periodWindow('weekly', time),
        monthly: periodWindow('monthly', time),
      };
      validUntil = windows.daily.endMs;
    }
    return windows[period];
  };
}
