import { test } from 'node:test';
import assert from 'node:assert/strict';
// @ts-expect-error plain ES module without type declarations
import { percentile, summarizeSpans } from './call-spans-summary.mjs';

test('call spans: nearest-rank percentiles of each span over the calls that reached the upstream', () => {
  const calls = Array.from({ length: 100 }, (_, index) => ({ seen: 0, created: 0.1, written: 0.1 + (index + 1) / 100, answered: 2, finished: 2.2 + index / 1000 }));
  calls.push({ seen: 0, finished: 0.3 } as never); // a cache hit: never reached the upstream
  const rows = summarizeSpans(calls) as Array<{ span: string; p50: number; p99: number; max: number; calls: number }>;
  const bySpan = Object.fromEntries(rows.map((row) => [row.span, row]));
  const waiting = bySpan['upstream request waiting to be written']!;
  assert.equal(waiting.calls, 100);
  assert.ok(Math.abs(waiting.p50 - 0.5) < 1e-9 && Math.abs(waiting.p99 - 0.99) < 1e-9 && Math.abs(waiting.max - 1) < 1e-9, JSON.stringify(waiting));
  const own = bySpan["gateway's own time (before + after)"]!;
  assert.ok(Math.abs(own.p50 - (0.1 + 0.2 + 0.049)) < 1e-9, JSON.stringify(own));
  assert.deepEqual(rows.map((row) => row.span).slice(0, 4), [
    'gateway, before the upstream request',
    'upstream request waiting to be written',
    'upstream, written → answer headers',
    'gateway, after the answer headers',
  ]);
});

test('call spans: percentile of nothing is undefined; of one value, that value', () => {
  assert.equal(percentile([], 99), undefined);
  assert.equal(percentile([4], 50), 4);
  assert.equal(percentile([1, 2, 3, 4], 50), 2);
});
