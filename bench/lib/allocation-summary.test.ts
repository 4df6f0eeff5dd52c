import { test } from 'node:test';
import assert from 'node:assert/strict';
// @ts-expect-error plain ES module without type declarations
import { summarizeAllocations } from './allocation-summary.mjs';

const frame = (functionName: string, url: string, lineNumber = 0) => ({ functionName, url, lineNumber, columnNumber: 0, scriptId: '0' });

test('allocation summary: bytes per request by site, and library allocation charged to the nearest gateway frame', () => {
  const profile = {
    head: {
      callFrame: frame('(root)', ''),
      selfSize: 0,
      children: [
        {
          callFrame: frame('handle', 'file:///repo/dist/src/http/handler.js', 9),
          selfSize: 1000,
          children: [
            { callFrame: frame('parse', 'file:///repo/node_modules/lib/parse.js', 4), selfSize: 3000, children: [] },
            { callFrame: frame('record', 'file:///repo/dist/src/log/record.js', 1), selfSize: 2000, children: [] },
          ],
        },
        { callFrame: frame('timer', 'node:internal/timers', 99), selfSize: 500, children: [] },
      ],
    },
  };
  const summary = summarizeAllocations(profile, 10);
  assert.equal(summary.bytesPerRequest, 650);
  assert.deepEqual(summary.bySite, [
    { site: 'parse lib/parse.js:5', bytesPerRequest: 300 },
    { site: 'record dist/src/log/record.js:2', bytesPerRequest: 200 },
    { site: 'handle dist/src/http/handler.js:10', bytesPerRequest: 100 },
    { site: 'timer node:internal/timers:100', bytesPerRequest: 50 },
  ]);
  assert.deepEqual(summary.byGatewayFrame, [
    { site: 'handle dist/src/http/handler.js:10', bytesPerRequest: 400 },
    { site: 'record dist/src/log/record.js:2', bytesPerRequest: 200 },
    { site: 'timer node:internal/timers:100', bytesPerRequest: 50 },
  ]);
});
