import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nanosToMicroUsd, nanosToUsd, parseUsdNanos, readResponseMeta, readRetryAfter } from '../src/index.js';

test('parseUsdNanos parses decimal USD exactly into integer nano-USD', () => {
  assert.equal(parseUsdNanos('0.000123456'), 123_456);
  assert.equal(parseUsdNanos('0.1'), 100_000_000);
  assert.equal(parseUsdNanos('12'), 12_000_000_000);
  assert.equal(parseUsdNanos('0.3'), 300_000_000); // 0.1 + 0.2 style float error must not appear
  assert.equal(parseUsdNanos('1.5e-7'), 150);
  assert.equal(parseUsdNanos('.5'), 500_000_000);
  assert.equal(parseUsdNanos('0'), 0);
  assert.equal(parseUsdNanos('0.0000000015'), 2); // rounds half away from zero past nine decimals
  assert.equal(parseUsdNanos('0.0000000014'), 1);
  assert.equal(parseUsdNanos('123456.123456789'), 123_456_123_456_789);
  assert.equal(parseUsdNanos('abc'), undefined);
  assert.equal(parseUsdNanos(''), undefined);
  assert.equal(parseUsdNanos(undefined), undefined);
});

test('nano-USD formats back into exact micro-USD and USD strings', () => {
  assert.equal(nanosToMicroUsd(123_456), '123.456');
  assert.equal(nanosToMicroUsd(5), '0.005');
  assert.equal(nanosToMicroUsd(3000), '3');
  assert.equal(nanosToMicroUsd(0), '0');
  assert.equal(nanosToUsd(123_456), '0.000123456');
  assert.equal(nanosToUsd(12_000_000_000), '12');
});

test('readResponseMeta reads every x-gw-* header', () => {
  const meta = readResponseMeta(
    new Headers({
      'x-gw-request-id': 'req_1',
      'x-gw-latency-ms': '12',
      'x-gw-request-cost': '0.000002',
      'x-gw-guardrails-applied': 'a,b',
      'x-gw-post-call-guardrails': 'c',
      'x-gw-prompt-version': '4',
      'x-gw-ab-test': 'b',
      'x-gw-stream-buffered': 'false',
      'x-gw-cache': 'HIT',
      'x-gw-org-id': 'org',
      'x-gw-key-alias': 'alias',
      'x-gw-route': 'r',
      'x-ratelimit-remaining-tokens': '99',
      'x-ratelimit-reset-tokens': '6s',
    }),
  );
  assert.deepEqual(
    { ...meta, headers: undefined },
    {
      requestId: 'req_1',
      latencyMs: 12,
      costUsd: '0.000002',
      costNanoUsd: 2000,
      costMicroUsd: '2',
      guardrailsApplied: ['a', 'b'],
      postCallGuardrails: ['c'],
      promptVersion: 4,
      abTest: 'b',
      streamBuffered: false,
      cache: 'hit',
      orgId: 'org',
      keyAlias: 'alias',
      route: 'r',
      rateLimit: { remainingTokens: 99, resetTokens: '6s' },
      headers: undefined,
    },
  );
  assert.equal(meta.headers['x-gw-ab-test'], 'b');
  const bare = readResponseMeta(new Headers());
  assert.equal(bare.requestId, null);
  assert.equal(bare.costUsd, undefined);
  assert.deepEqual(bare.guardrailsApplied, []);
});

test('readRetryAfter reads delta-seconds and HTTP dates', () => {
  assert.equal(readRetryAfter(new Headers({ 'retry-after': '30' })), 30);
  const now = Date.parse('2025-01-01T00:00:00Z');
  assert.equal(readRetryAfter(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:10 GMT' }), now), 10);
  assert.equal(readRetryAfter(new Headers({ 'retry-after': 'soon' })), undefined);
  assert.equal(readRetryAfter(new Headers()), undefined);
});
