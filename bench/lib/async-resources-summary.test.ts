import { test } from 'node:test';
import assert from 'node:assert/strict';
// @ts-expect-error plain ES module without type declarations
import { perCallCounts, perCallSites } from './async-resources-summary.mjs';

test('async resources: counts per call, most first, rare types left out', () => {
  const rows = perCallCounts({ PROMISE: 43000, Timeout: 2100, TickObject: 3400, TCPWRAP: 3 }, 1000);
  assert.deepEqual(rows, [
    { type: 'PROMISE', perCall: 43 },
    { type: 'TickObject', perCall: 3.4 },
    { type: 'Timeout', perCall: 2.1 },
  ]);
});

test('async resources: sites per call, paths from the repository root, the most first, at most the limit', () => {
  const sites = {
    'PROMISE /repo/dist/src/metering/meter-stage.js': 780,
    'PROMISE /repo/dist/src/routing/run-attempt.js': 220,
    "Timeout Node's own code": 340,
    'PROMISE /elsewhere/lib.js': 8,
  };
  const rows = perCallSites(sites, 100, '/repo', 2);
  assert.deepEqual(rows, [
    { type: 'PROMISE', site: 'dist/src/metering/meter-stage.js', perCall: 7.8 },
    { type: 'Timeout', site: "Node's own code", perCall: 3.4 },
  ]);
  assert.equal(perCallSites(sites, 100, '/repo/').length, 4);
});
