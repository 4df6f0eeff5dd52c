import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isAbsentAt } from './is-absent-at.js';

test('is absent at: only a path that leads to nothing is absent', () => {
  const body = { a: { b: [{ c: 1 }, { d: null }] }, zero: 0 };
  assert.equal(isAbsentAt(body, ['a', 'b', 0, 'c']), false);
  assert.equal(isAbsentAt(body, ['a', 'b', 1, 'd']), false, 'null was sent');
  assert.equal(isAbsentAt(body, ['zero']), false);
  assert.equal(isAbsentAt(body, ['a', 'b', 1, 'c']), true);
  assert.equal(isAbsentAt(body, ['a', 'x', 'y']), true);
  assert.equal(isAbsentAt(body, ['zero', 'inner']), true);
  assert.equal(isAbsentAt(body, ['constructor']), true, 'inherited properties were not sent');
  assert.equal(isAbsentAt(body, []), false, 'the body itself is there');
});
