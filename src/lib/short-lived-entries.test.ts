import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ShortLivedEntries } from './short-lived-entries.js';

test('short-lived entries: set, get and delete behave as a Map does', () => {
  const entries = new ShortLivedEntries<string, number>();
  assert.equal(entries.get('a'), undefined);
  assert.equal(entries.delete('a'), false);
  entries.set('a', 1).set('b', 2);
  assert.equal(entries.size, 2);
  assert.equal(entries.get('a'), 1);
  entries.set('a', 3);
  assert.equal(entries.get('a'), 3);
  assert.equal(entries.delete('a'), true);
  assert.equal(entries.delete('a'), false);
  assert.equal(entries.get('a'), undefined);
  assert.equal(entries.size, 1);
  // A key removed and added again is present again, and counted once.
  entries.set('a', 4);
  assert.equal(entries.get('a'), 4);
  assert.equal(entries.size, 2);
  assert.deepEqual(entries.list(), [['a', 4], ['b', 2]]);
});

test('short-lived entries: thousands of entries coming and going leave exactly the live ones, in the order they came', () => {
  const entries = new ShortLivedEntries<string, number>();
  const live = new Map<string, number>();
  for (let call = 0; call < 5000; call++) {
    entries.set(`call-${call}`, call);
    live.set(`call-${call}`, call);
    // Every call but each seventh ends before the next one arrives; a few stay (long claims).
    if (call % 7 !== 0) {
      assert.equal(entries.delete(`call-${call}`), true);
      live.delete(`call-${call}`);
    }
    // Now and then an older one ends too.
    if (call % 50 === 49) {
      const oldest = [...live.keys()][0]!;
      assert.equal(entries.delete(oldest), true);
      live.delete(oldest);
    }
    if (call % 997 === 0) assert.deepEqual(entries.list(), [...live]);
  }
  assert.equal(entries.size, live.size);
  assert.deepEqual(entries.list(), [...live]);
  for (const [key, value] of live) assert.equal(entries.get(key), value);
});

test('short-lived entries: removing entries while going through a listing visits every entry once', () => {
  const entries = new ShortLivedEntries<number, string>();
  for (let key = 0; key < 200; key++) entries.set(key, `hold ${key}`);
  const visited: number[] = [];
  for (const [key] of entries.list()) {
    visited.push(key);
    entries.delete(key);
  }
  assert.equal(visited.length, 200);
  assert.deepEqual(visited, [...Array(200).keys()]);
  assert.equal(entries.size, 0);
  assert.deepEqual(entries.list(), []);
});
