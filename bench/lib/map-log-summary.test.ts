import { test } from 'node:test';
import assert from 'node:assert/strict';
// @ts-expect-error plain ES module without type declarations
import { summarizeMapLog } from './map-log-summary.mjs';

test('map log summary: classes made per request by kind, and transitions by the key they add', () => {
  const log = [
    'map,Transition,100,0x1,0x2,0x9,10,4,,stream',
    'map-details,100,0x2,"descriptors"',
    'map,Transition,101,0x1,0x3,0x9,10,4,,stream',
    'map,Transition,102,0x4,0x5,0x9,12,8,,symbol("a,b" hash 1)',
    'map,Normalize,103,0x5,0x6,0x9,0,0,CopyAsPrototype,',
    'code-creation,Builtin,2,104,0x7,12,Foo',
    '',
  ].join('\n');
  const summary = summarizeMapLog(log, 2);
  assert.equal(summary.classesPerRequest, 2);
  assert.deepEqual(summary.byKind, [
    { name: 'Transition', perRequest: 1.5 },
    { name: 'Normalize', perRequest: 0.5 },
  ]);
  assert.deepEqual(summary.transitionsByKey, [
    { name: 'stream', perRequest: 1 },
    { name: 'symbol("a,b" hash 1)', perRequest: 0.5 },
  ]);
});

test('map log summary: the list is cut at `top` and an empty log counts nothing', () => {
  const log = ['a', 'b', 'c'].map((key, index) => `map,Transition,${index},0x1,0x2,0x9,1,1,,${key}`).join('\n');
  assert.deepEqual(summarizeMapLog(log, 1, 2).transitionsByKey.length, 2);
  assert.deepEqual(summarizeMapLog('', 10), { requests: 10, classesPerRequest: 0, byKind: [], transitionsByKey: [] });
});
