import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createSessionToken } from './session-token.js';

const key = Buffer.alloc(32, 7);

test('a session token round-trips its claims until it expires', () => {
  let now = 1_000_000;
  const tokens = createSessionToken(key, () => now);
  const { token, claims } = tokens.issue({ scope: 'org', orgId: 'org-1', keyId: 'key-1' }, 60_000);
  assert.deepEqual(tokens.verify(token), claims);
  assert.equal(claims.scope === 'org' && claims.orgId, 'org-1');
  now += 60_000;
  assert.equal(tokens.verify(token), undefined, 'expired');
});

test('tampered, foreign-key and malformed tokens are rejected', () => {
  const tokens = createSessionToken(key);
  const { token } = tokens.issue({ scope: 'org', orgId: 'org-1', keyId: 'key-1' }, 60_000);
  const [payload, mac] = token.split('.');
  const forged = Buffer.from(JSON.stringify({ scope: 'master', nonce: 'x', expiresAt: Date.now() + 60_000 })).toString('base64url');
  assert.equal(tokens.verify(`${forged}.${mac}`), undefined);
  assert.equal(createSessionToken(Buffer.alloc(32, 8)).verify(token), undefined);
  for (const bad of [undefined, '', 'abc', `${payload}.`, `${payload}.${mac}.x`]) assert.equal(tokens.verify(bad), undefined);
});

test('the CSRF token is bound to one session', () => {
  const tokens = createSessionToken(key);
  const first = tokens.issue({ scope: 'master' }, 60_000).claims;
  const second = tokens.issue({ scope: 'master' }, 60_000).claims;
  const csrf = tokens.csrfFor(first);
  assert.equal(tokens.checkCsrf(first, csrf), true);
  assert.equal(tokens.checkCsrf(second, csrf), false);
  assert.equal(tokens.checkCsrf(first, undefined), false);
  assert.equal(tokens.checkCsrf(first, csrf.slice(1)), false);
});
