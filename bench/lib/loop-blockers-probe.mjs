// Preloaded into the gateway by `bench/loop-blockers.mjs` (node --import): times the work that
// holds the event loop without being a request's own, so the tool can say what a request arriving
// at a random moment may wait behind. Recorded on the main thread: every SQLite transaction run
// through better-sqlite3's `transaction()` (the batched inserts' slices, commit included), every
// statement prepared (the query builder prepares each query it runs), and every garbage-collection
// pause (PerformanceObserver 'gc'). SIGUSR2 writes what was recorded to GW_LOOP_BLOCKERS_OUT (JSON:
// [kind, milliseconds] pairs) and starts over.
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

if (isMainThread) {
  const output = process.env.GW_LOOP_BLOCKERS_OUT;
  // The gateway's own copy of better-sqlite3, patched before the gateway opens its database.
  const SQLite = createRequire(new URL('../../package.json', import.meta.url))('better-sqlite3');
  let events = [];
  const { transaction, prepare } = SQLite.prototype;
  SQLite.prototype.transaction = function timedTransaction(body) {
    const run = transaction.call(this, body);
    return function timedRun(...args) {
      const startedAt = performance.now();
      try {
        return run.apply(this, args);
      } finally {
        events.push(['SQLite transaction', performance.now() - startedAt]);
      }
    };
  };
  SQLite.prototype.prepare = function timedPrepare(...args) {
    const startedAt = performance.now();
    try {
      return prepare.apply(this, args);
    } finally {
      events.push(['statement prepared', performance.now() - startedAt]);
    }
  };
  const gcKinds = {
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'GC: scavenge',
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'GC: mark-compact',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'GC: incremental marking',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'GC: weak callbacks',
  };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) events.push([gcKinds[entry.detail?.kind] ?? 'GC: other', entry.duration]);
  }).observe({ entryTypes: ['gc'] });
  process.on('SIGUSR2', () => {
    if (output) writeFileSync(output, JSON.stringify(events));
    events = [];
  });
}
