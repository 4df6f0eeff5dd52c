import { percentile } from './call-spans-summary.mjs';

/**
 * What held the event loop in a fixed-rate run (bench/lib/loop-blockers-probe.mjs), per kind of
 * work: how many a second, their nearest-rank p50 / p99 and longest, their time a second, and how
 * many a second ran over 0.5 ms and over 1 ms (what a request arriving meanwhile waits behind).
 * events: Array<[kind, ms]> over `windowSeconds` → rows sorted by time a second, most first.
 */
export function summarizeBlockers(events, windowSeconds) {
  const byKind = new Map();
  for (const [kind, ms] of events) {
    if (!byKind.has(kind)) byKind.set(kind, []);
    byKind.get(kind).push(ms);
  }
  return [...byKind.entries()]
    .map(([kind, values]) => {
      const sorted = values.sort((a, b) => a - b);
      return {
        kind,
        perSecond: sorted.length / windowSeconds,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        max: sorted.at(-1),
        msPerSecond: sorted.reduce((sum, value) => sum + value, 0) / windowSeconds,
        overHalfMsPerSecond: sorted.filter((value) => value > 0.5).length / windowSeconds,
        overOneMsPerSecond: sorted.filter((value) => value > 1).length / windowSeconds,
      };
    })
    .sort((a, b) => b.msPerSecond - a.msPerSecond);
}
