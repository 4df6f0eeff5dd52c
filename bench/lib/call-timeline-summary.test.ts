import { test } from 'node:test';
import assert from 'node:assert/strict';
// @ts-expect-error plain ES module without type declarations
import { alignTimelines, summarizeTimeline } from './call-timeline-summary.mjs';

test('call timeline: the median of each step, in the order steps happen; a step some calls skip counts only those that have it', () => {
  const calls = [
    { 'stage:meter': 0.2, admitted: 0.5, 'upstream request created': 0.9 },
    { 'stage:meter': 0.4, admitted: 0.7, 'upstream request created': 1.1 },
    { 'stage:meter': 0.3, admitted: 0.6 },
    { 'stage:meter': 0.1, admitted: 0.2 },
  ];
  assert.deepEqual(summarizeTimeline(calls), [
    { step: 'stage:meter', medianMs: 0.25, calls: 4 },
    { step: 'admitted', medianMs: 0.55, calls: 4 },
    { step: 'upstream request created', medianMs: 1.0, calls: 2 },
  ]);
});

test('call timeline: two modes side by side in the order of the one with more steps; a step only one has is blank in the other', () => {
  const embedded = [
    { step: 'stage:meter', medianMs: 0.13, calls: 9 },
    { step: 'admitted', medianMs: 0.15, calls: 9 },
  ];
  const shared = [
    { step: 'stage:meter', medianMs: 0.17, calls: 9 },
    { step: 'redis reply', medianMs: 0.4, calls: 9 },
    { step: 'admitted', medianMs: 0.48, calls: 9 },
  ];
  assert.deepEqual(alignTimelines({ embedded, shared }), {
    labels: ['embedded', 'shared'],
    rows: [
      { step: 'stage:meter', byLabel: { embedded: 0.13, shared: 0.17 } },
      { step: 'redis reply', byLabel: { embedded: undefined, shared: 0.4 } },
      { step: 'admitted', byLabel: { embedded: 0.15, shared: 0.48 } },
    ],
  });
});
