import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayError } from '../errors/gateway-error.js';
import { assertSafeRegex } from './assert-safe-regex.js';
import { compilePatterns, detectDenyList, detectRegex } from './detect-custom.js';
import { redactSpans } from './redact-spans.js';

test('custom regex findings are redacted with the label', () => {
  const text = 'ticket PRJ-1234 and PRJ-99';
  const findings = detectRegex(text, compilePatterns(['PRJ-\\d{2,4}'], false), 'ticket');
  assert.equal(redactSpans(text, findings), 'ticket [REDACTED_TICKET] and [REDACTED_TICKET]');
  assert.deepEqual(detectRegex('nothing', compilePatterns(['x*'], false), 'x'), [], 'empty matches mark nothing');
});

test('deny-list matches case-insensitively, whole words by default', () => {
  assert.equal(detectDenyList('Project Falcon is secret', ['falcon'], true, 'codename').length, 1);
  assert.equal(detectDenyList('falconry', ['falcon'], true, 'codename').length, 0);
  assert.equal(detectDenyList('falconry', ['falcon'], false, 'codename').length, 1);
});

test('patterns prone to catastrophic backtracking are refused', () => {
  for (const pattern of ['(a+)+$', '(a|aa)*b', '(\\w+\\s?)*$', '(a)\\1', '(?=a)a', 'a*b*c*d*', '(x+x+)+y']) {
    assert.throws(() => assertSafeRegex(pattern), GatewayError, pattern);
  }
  for (const pattern of ['PRJ-\\d{2,4}', '\\bproject\\s+\\w+', '[a-z]+@corp\\.example', '(?:foo|bar)-\\d+']) {
    assert.doesNotThrow(() => assertSafeRegex(pattern), pattern);
  }
  assert.throws(() => assertSafeRegex('('), GatewayError);
});

test('deny-list on 1 MB of near-misses is correct', () => {
  assert.equal(detectDenyList('falco '.repeat(200_000), ['falcon'], true, 'x').length, 0);
});
