import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayError } from '../errors/gateway-error.js';
import { MAX_JSON_DEPTH, nestsDeeperThan, parseJsonBody } from './json-body.js';

const nested = (depth: number, open = '{"a":', close = '}') => `${open.repeat(depth)}1${close.repeat(depth)}`;

test('json body: nesting is counted outside strings only, escapes included', () => {
  assert.equal(nestsDeeperThan(nested(3), 3), false);
  assert.equal(nestsDeeperThan(nested(4), 3), true);
  assert.equal(nestsDeeperThan(nested(4, '[', ']'), 3), true);
  assert.equal(nestsDeeperThan('{"a":[{"b":[]}],"c":{}}', 4), false);
  assert.equal(nestsDeeperThan('{"a":[{"b":[]}],"c":{}}', 3), true);
  // Brackets in strings do not count, whatever the escapes before a quote.
  assert.equal(nestsDeeperThan('{"a":"[[[[{{{{"}', 1), false);
  assert.equal(nestsDeeperThan('{"a":"\\"[[[["}', 1), false);
  assert.equal(nestsDeeperThan('{"a":"\\\\","b":[[1]]}', 2), true, 'an escaped backslash does not escape the quote after it');
  assert.equal(nestsDeeperThan('["\\\\\\"[[["]', 1), false);
  assert.equal(nestsDeeperThan('{"unterminated', 1), false);
});

test(`json body: a body nested deeper than ${MAX_JSON_DEPTH} levels is a 400 saying so; one at the limit parses`, () => {
  const deep = `{"model":"m","extra":${nested(10_000)}}`;
  assert.throws(
    () => parseJsonBody(deep),
    (error: unknown) => error instanceof GatewayError && error.status === 400 && error.code === 'invalid_request' && /nested too deeply/.test(error.message),
  );
  // Deep arrays too, and the prototype-key path (whose reviver would recurse).
  assert.throws(() => parseJsonBody(`{"__proto__":{},"a":${nested(5_000, '[', ']')}}`), /nested too deeply/);
  const atLimit = `{"a":${nested(MAX_JSON_DEPTH - 1)}}`;
  const parsed = parseJsonBody(atLimit) as Record<string, unknown>;
  assert.equal(JSON.stringify(parsed), atLimit);
  assert.throws(() => parseJsonBody(`{"a":${nested(MAX_JSON_DEPTH)}}`), /nested too deeply/);
  // Strings full of brackets are text, not nesting.
  assert.deepEqual(parseJsonBody(JSON.stringify({ content: '{['.repeat(10_000) })), { content: '{['.repeat(10_000) });
});

test('json body: a __proto__ key is dropped however its letters are spelt, and nothing else is', () => {
  for (const key of ['__proto__', '__pro\\u0074o__', '\\u005f_proto__', '__\\u0070roto__', '__p\\u0072\\u006Fto__', '\\u005F\\u005F\\u0070\\u0072\\u006f\\u0074\\u006f\\u005f\\u005f']) {
    const body = parseJsonBody(`{"${key}":{"polluted":"yes"},"a":1,"nested":{"${key}":{"polluted":"yes"}}}`) as Record<string, unknown>;
    assert.equal(Object.hasOwn(body, '__proto__'), false, key);
    assert.equal(Object.hasOwn(body.nested as object, '__proto__'), false, key);
    assert.equal(Object.getPrototypeOf(body), Object.prototype, key);
    assert.equal(body.a, 1);
  }
  // Escaped letters elsewhere, and non-ASCII escapes, parse as they are.
  assert.deepEqual(parseJsonBody('{"t\\u0065xt":"caf\\u00e9 \\u0074ea","__protocol__":1}'), { text: 'café tea', __protocol__: 1 });
});
