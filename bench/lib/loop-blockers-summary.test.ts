import { test } from 'node:test';
import assert from 'node:assert/strict';
// @ts-expect-error plain ES module without type declarations
import { summarizeBlockers } from './loop-blockers-summary.mjs';

test('loop blockers: per kind, how often a second, how long, and how many ran over 0.5 and 1 ms, the most time first', () => {
  const events: Array<[string, number]> = [];
  for (let index = 1; index <= 100; index++) events.push(['SQLite transaction', index / 100]);
  events.push(['GC: scavenge', 2], ['GC: scavenge', 3]);
  const rows = summarizeBlockers(events, 10) as Array<Record<string, number | string>>;
  assert.deepEqual(rows.map((row) => row.kind), ['SQLite transaction', 'GC: scavenge']);
  const [transactions, scavenges] = rows;
  assert.equal(transactions!.perSecond, 10);
  assert.equal(transactions!.p50, 0.5);
  assert.equal(transactions!.p99, 0.99);
  assert.equal(transactions!.max, 1);
  assert.ok(Math.abs((transactions!.msPerSecond as number) - 5.05) < 1e-9);
  // 0.51 … 1.00 are over 0.5 ms; none is over 1 ms.
  assert.equal(transactions!.overHalfMsPerSecond, 5);
  assert.equal(transactions!.overOneMsPerSecond, 0);
  assert.equal(scavenges!.perSecond, 0.2);
  assert.equal(scavenges!.msPerSecond, 0.5);
  assert.equal(scavenges!.overOneMsPerSecond, 0.2);
});
