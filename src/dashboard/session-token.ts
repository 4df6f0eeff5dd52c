import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** What a dashboard session carries; the signed token is the whole state (nothing is stored server-side). */
export type SessionClaims =
  | { scope: 'master'; nonce: string; expiresAt: number }
  | { scope: 'org'; orgId: string; keyId: string; nonce: string; expiresAt: number };

export type SessionSubject = { scope: 'master' } | { scope: 'org'; orgId: string; keyId: string };

export interface SessionToken {
  /** A fresh token for the subject; the nonce makes every sign-in's CSRF token different. */
  issue(subject: SessionSubject, ttlMs: number): { token: string; claims: SessionClaims };
  /** The claims of a well-signed, unexpired token, or undefined. */
  verify(token: string | undefined): SessionClaims | undefined;
  /** The double-submit CSRF token bound to one session (HMAC of its nonce, so it cannot be forged without the key). */
  csrfFor(claims: SessionClaims): string;
  /** Constant-time check of a presented CSRF token against the session's. */
  checkCsrf(claims: SessionClaims, presented: string | undefined): boolean;
}

function sign(key: Buffer, purpose: string, data: string): string {
  return createHmac('sha256', key).update(`${purpose}\n${data}`).digest('base64url');
}

function safeEqual(left: string, right: string): boolean {
  const a = Buffer.from(left);
  const b = Buffer.from(right);
  return a.length === b.length && timingSafeEqual(a, b);
}

function parseClaims(payload: string): SessionClaims | undefined {
  try {
    const value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (typeof value.nonce !== 'string' || typeof value.expiresAt !== 'number') return undefined;
    if (value.scope === 'master') return { scope: 'master', nonce: value.nonce, expiresAt: value.expiresAt };
    if (value.scope === 'org' && typeof value.orgId === 'string' && typeof value.keyId === 'string') {
      return { scope: 'org', orgId: value.orgId, keyId: value.keyId, nonce: value.nonce, expiresAt: value.expiresAt };
    }
    return undefined;
  } catch {
    return undefined;
  }
}

/** HMAC-SHA-256 signed session tokens: `base64url(json claims).base64url(mac)`. */
export function createSessionToken(key: Buffer, now: () => number = Date.now): SessionToken {
  return {
    issue(subject, ttlMs) {
      const claims: SessionClaims = { ...subject, nonce: randomBytes(16).toString('base64url'), expiresAt: now() + ttlMs };
      const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
      return { token: `${payload}.${sign(key, 'session', payload)}`, claims };
    },
    verify(token) {
      if (!token) return undefined;
      const [payload, mac, extra] = token.split('.');
      if (!payload || !mac || extra !== undefined) return undefined;
      if (!safeEqual(mac, sign(key, 'session', payload))) return undefined;
      const claims = parseClaims(payload);
      if (!claims || claims.expiresAt <= now()) return undefined;
      return claims;
    },
    csrfFor(claims) {
      return sign(key, 'csrf', claims.nonce);
    },
    checkCsrf(claims, presented) {
      return typeof presented === 'string' && safeEqual(presented, sign(key, 'csrf', claims.nonce));
    },
  };
}
