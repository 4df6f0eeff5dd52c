import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayError } from '../errors/gateway-error.js';
import { assertSafeRegex } from './assert-safe-regex.js';
import { REGEX_OVERLAP, REGEX_WINDOW, compilePatterns, detectDenyList, detectRegex, regexWindows } from './detect-custom.js';
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

test('bounded repetition that backtracks like unbounded repetition is refused', () => {
  for (const pattern of [
    'a{0,120}a{0,120}a{0,120}b',
    'a{0,120}a{0,120}b',
    'a*a*b',
    '\\w+\\d+x',
    '.*foo.*bar',
    'a+b?a+',
    '\\w+\\b\\w+',
    '[a-z]{1,50}[a-m]{1,50}!',
    'a{0,16}a{0,16}a{0,16}b',
    'a?a?a?a?a?a?a?a?a?b',
    '\\u0061+\\x61+b',
  ]) {
    assert.throws(() => assertSafeRegex(pattern), GatewayError, pattern);
  }
  for (const pattern of [
    '\\d{3}-\\d{2}-\\d{4}',
    '[A-Z]{2}\\d{2}[A-Z0-9]{1,30}',
    '\\b(foo|bar)\\b',
    '\\w+@\\w+\\.com',
    '\\bproject\\s+\\w+',
    'a{0,8}b{0,8}c',
    'sk-[A-Za-z0-9]{32,64}',
  ]) {
    assert.doesNotThrow(() => assertSafeRegex(pattern), pattern);
  }
  assert.throws(() => assertSafeRegex('A+a+b', 'i'), GatewayError, 'overlap is judged with the flags');
  assert.doesNotThrow(() => assertSafeRegex('A+a+b'));
});

test('custom patterns run on bounded, overlapping windows and find matches across their edges once, whole', () => {
  const windows = regexWindows(1 << 20);
  assert.ok(windows.every((window) => window.end - window.start <= REGEX_WINDOW));
  assert.ok(windows.slice(1).every((window, index) => windows[index].end - window.start === REGEX_OVERLAP));
  assert.equal(windows[windows.length - 1].end, 1 << 20);
  const patterns = compilePatterns(['PRJ-\\d{2,8}', '[a-z]+@corp\\.example'], false);
  const secondStart = windows[1].start;
  for (const at of [secondStart - 6, secondStart - 3, windows[0].end - 6, windows[0].end - 3, windows[0].end]) {
    const text = `${'x '.repeat(at / 2)}${at % 2 ? ' ' : ''}PRJ-12345678 and bob@corp.example ${'y'.repeat(5000)}`;
    const found = detectRegex(text, patterns, 'ticket').map((finding) => text.slice(finding.start, finding.end));
    assert.deepEqual(found, ['PRJ-12345678', 'bob@corp.example'], `at ${at}`);
  }
  assert.deepEqual(detectRegex('a'.repeat(1 << 20), patterns, 'ticket'), []);
  // A window edge inside a word is no word boundary, and no start or end of the text.
  const word = compilePatterns(['\\bfoo', 'baz\\b', '^bar', 'bar$'], false);
  for (const offset of [-9, -6, -3, 0]) {
    const edges = [windows[1].start, windows[0].end];
    for (const edge of edges) {
      const text = `${'x'.repeat(edge + offset)}foobarbaz${'x'.repeat(2000)}`;
      assert.deepEqual(detectRegex(text, word, 'w'), [], `edge ${edge} offset ${offset}`);
    }
  }
  assert.equal(detectRegex(`${'x '.repeat(2000)}baz`, word, 'w').length, 1);
});

test('deny-list on 1 MB of near-misses is correct', () => {
  assert.equal(detectDenyList('falco '.repeat(200_000), ['falcon'], true, 'x').length, 0);
});
