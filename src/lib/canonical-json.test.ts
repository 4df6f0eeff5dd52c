import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalJson } from './canonical-json.js';

test('sorts keys at every depth with compact separators', () => {
  assert.equal(canonicalJson({ b: { d: 1, c: [{ z: 1, y: 2 }] }, a: 'x' }), '{"a":"x","b":{"c":[{"y":2,"z":1}],"d":1}}');
});

test("matches Python's json.dumps(sort_keys=True, separators=(',',':')) including non-ASCII escapes and code-point key order", () => {
  // Expected string produced by CPython 3 for the same value.
  const value = { b: [1, { z: null, a: 'é\u2028😀\u007f\n' }], a: true, '😀': 1, '\uffff': 2, A: -3 };
  assert.equal(
    canonicalJson(value),
    '{"A":-3,"a":true,"b":[1,{"a":"\\u00e9\\u2028\\ud83d\\ude00\\u007f\\n","z":null}],"\\uffff":2,"\\ud83d\\ude00":1}',
  );
});

test('follows JSON.stringify for undefined, non-finite numbers, dates and escapes', () => {
  assert.equal(canonicalJson({ a: undefined, b: [undefined, Number.NaN], c: new Date(0) }), '{"b":[null,null],"c":"1970-01-01T00:00:00.000Z"}');
  assert.equal(canonicalJson('a"b\\c\u0001\t'), '"a\\"b\\\\c\\u0001\\t"');
  assert.equal(canonicalJson(undefined), 'null');
});

test('rejects circular structures', () => {
  const value: Record<string, unknown> = {};
  value.self = value;
  assert.throws(() => canonicalJson(value), /circular/);
});

test('the output round-trips through JSON.parse', () => {
  const value = { title: '[gw] Ünïcode', details: { nested: { list: [1, 'two', { three: 3 }] } } };
  assert.deepEqual(JSON.parse(canonicalJson(value)), value);
});
