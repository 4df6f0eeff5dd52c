import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_ORG_SETTINGS, type AuthContext } from '../tenancy/tenancy-types.js';
import { formatResetDuration } from './rate-limit-headers.js';
import { rateLimitsFor } from './rate-limits-for.js';

function auth(overrides: { tier?: AuthContext['org']['tier']; org?: object; key?: object; user?: object | null }): AuthContext {
  return {
    org: { id: 'o', name: 'o', tier: overrides.tier ?? 'tier1', customLimits: { ...overrides.org }, enabledModels: null, budget: null, settings: DEFAULT_ORG_SETTINGS, createdAt: 0 },
    team: null,
    key: {
      id: 'k', orgId: 'o', teamId: null, name: 'k', alias: 'sk-...k', role: 'inference', status: 'active', budget: null, userBudget: null,
      limits: { ...overrides.key }, userLimits: overrides.user === undefined ? null : (overrides.user as object), allowedModels: null, createdAt: 0, lastUsedAt: null, revokedAt: null,
    },
  };
}

test('tier defaults from the spec', () => {
  assert.deepEqual(rateLimitsFor(auth({ tier: 'tier1' })).key, { rpm: 500, tpm: 500_000, tps: 10 });
  assert.deepEqual(rateLimitsFor(auth({ tier: 'tier2' })).key, { rpm: 500, tpm: 500_000, tps: 50 });
  assert.deepEqual(rateLimitsFor(auth({ tier: 'tier3' })).key, { rpm: 1000, tpm: 1_000_000, tps: 200 });
});

test('org custom limits, then key limits, then per-user overrides', () => {
  const limits = rateLimitsFor(auth({ tier: 'enterprise', org: { rpm: 5000 }, key: { tpm: 1234 }, user: { rpm: 7 } }));
  assert.deepEqual(limits.key, { rpm: 5000, tpm: 1234, tps: 1000 });
  assert.deepEqual(limits.user, { rpm: 7, tpm: 1234, tps: 1000 });
  assert.equal(rateLimitsFor(auth({})).user, null);
});

test('reset durations in the OpenAI format', () => {
  assert.equal(formatResetDuration(20), '20ms');
  assert.equal(formatResetDuration(1500), '1.5s');
  assert.equal(formatResetDuration(360_000), '6m0s');
  assert.equal(formatResetDuration(59_999), '59.999s');
  // Rounded up to the millisecond, never to "60s" or "1m60s".
  assert.equal(formatResetDuration(999.2), '1s');
  assert.equal(formatResetDuration(59_999.6), '1m0s');
  assert.equal(formatResetDuration(119_999.5), '2m0s');
  assert.equal(formatResetDuration(1_050), '1.05s');
  assert.equal(formatResetDuration(1_005), '1.005s');
  assert.equal(formatResetDuration(61_120), '1m1.12s');
  assert.equal(formatResetDuration(0), '0ms');
  assert.equal(formatResetDuration(-5), '0ms');
});
