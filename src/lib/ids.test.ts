import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newTimeOrderedId, timeOrderedIdFloor } from './ids.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('time-ordered ids are UUIDv7 whose leading 48 bits are the Unix milliseconds', () => {
  const at = Date.UTC(2026, 10, 22, 12, 0, 0, 123) + 10_000;
  const id = newTimeOrderedId(at);
  assert.match(id, UUID_V7);
  assert.equal(parseInt(id.slice(0, 8) + id.slice(9, 13), 16), at);
});

test('time-ordered ids sort in creation order, also thousands within one millisecond', () => {
  const at = Date.now() + 60_000;
  const ids = Array.from({ length: 10_000 }, () => newTimeOrderedId(at));
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(new Set(ids).size, ids.length);
  for (const id of ids.slice(0, 50)) assert.match(id, UUID_V7);
  // A clock that steps back never breaks the order either.
  const after = newTimeOrderedId(at - 5_000);
  assert.ok(after > ids.at(-1)!);
});

test('the random tail differs between ids', () => {
  const tails = new Set(Array.from({ length: 1000 }, () => newTimeOrderedId().slice(19)));
  assert.ok(tails.size > 990);
});

test('timeOrderedIdFloor: every id made before the time sorts below it, every id made at it or later not', () => {
  const at = Date.now() + 3_600_000;
  const floor = timeOrderedIdFloor(at);
  assert.match(floor, /^[0-9a-f]{8}-[0-9a-f]{4}-$/);
  const before = `${timeOrderedIdFloor(at - 1)}7fff-bfff-ffffffffffff`;
  assert.ok(before < floor);
  const made = newTimeOrderedId(at);
  assert.ok(made >= floor && made.startsWith(floor));
  assert.ok(newTimeOrderedId(at + 1) > floor);
  assert.equal(timeOrderedIdFloor(0), '00000000-0000-');
});
