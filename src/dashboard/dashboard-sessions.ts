import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
import type { AdminPrincipal } from '../http/management-auth.js';
import type { TenancyStore } from '../tenancy/tenancy-store.js';
import type { AuthContext, VirtualKey } from '../tenancy/tenancy-types.js';
import { createSessionToken, type SessionClaims, type SessionSubject } from './session-token.js';

export const SESSION_COOKIE = 'gw_session';
export const CSRF_HEADER = 'x-csrf-token';
/** Which org a master session acts on when it calls an org-scoped (bearer-key) endpoint. */
export const ORG_HEADER = 'x-gw-dashboard-org';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface DashboardSessionsOptions {
  sessionKey: Buffer;
  store: Pick<TenancyStore, 'getKey' | 'getOrganization' | 'getTeam'>;
  ttlMs?: number;
  now?: () => number;
}

export interface DashboardSessions {
  /** The admin principal of the request's session cookie; 403 on a state-changing call without the CSRF token. */
  resolve(request: FastifyRequest): Promise<AdminPrincipal | undefined>;
  /** The org a session acts on for the spec's bearer-key endpoints (/gw/*, /api/credits/*). */
  resolveKey(request: FastifyRequest): Promise<AuthContext | undefined>;
  /** Valid session claims of the request (no CSRF check); for the session endpoints themselves. */
  read(request: FastifyRequest): Promise<SessionClaims | undefined>;
  /** Starts a session: sets the cookie and returns the CSRF token the page must echo. */
  start(request: FastifyRequest, reply: FastifyReply, subject: SessionSubject): { csrfToken: string; expiresAt: number };
  end(request: FastifyRequest, reply: FastifyReply): void;
  csrfFor(claims: SessionClaims): string;
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index < 0) continue;
    if (part.slice(0, index).trim() === name) return decodeURIComponent(part.slice(index + 1).trim());
  }
  return undefined;
}

function cookieHeader(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
  // Secure whenever the page came over HTTPS (directly or through a proxy Fastify trusts).
  const secure = request.protocol === 'https' ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`;
}

/**
 * A master session has no key of its own; the org-scoped endpoints it reaches through the dashboard
 * see this stand-in, which is never stored and cannot call inference (inference authenticates by token).
 */
function masterStandInKey(orgId: string, now: number): VirtualKey {
  return {
    id: 'dashboard-master',
    orgId,
    teamId: null,
    name: 'dashboard (master credential)',
    alias: 'sk-...mstr',
    role: 'org_admin',
    status: 'active',
    budget: null,
    userBudget: null,
    limits: {},
    userLimits: null,
    allowedModels: null,
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
  };
}

export function createDashboardSessions(options: DashboardSessionsOptions): DashboardSessions {
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? 12 * 3600_000;
  const tokens = createSessionToken(options.sessionKey, now);
  const { store } = options;

  async function read(request: FastifyRequest): Promise<SessionClaims | undefined> {
    const claims = tokens.verify(readCookie(request.headers.cookie, SESSION_COOKIE));
    if (!claims) return undefined;
    if (claims.scope === 'org') {
      // Revoking the org-admin key ends its sessions at once.
      const key = await store.getKey(claims.keyId);
      if (!key || key.status !== 'active' || key.role !== 'org_admin' || key.orgId !== claims.orgId) return undefined;
    }
    return claims;
  }

  async function readChecked(request: FastifyRequest): Promise<SessionClaims | undefined> {
    const claims = await read(request);
    if (!claims) return undefined;
    if (!SAFE_METHODS.has(request.method)) {
      const presented = request.headers[CSRF_HEADER];
      if (!tokens.checkCsrf(claims, Array.isArray(presented) ? presented[0] : presented)) {
        throw new GatewayError('permission_denied', `Missing or wrong ${CSRF_HEADER} header for a dashboard session; reload the page and sign in again.`);
      }
    }
    return claims;
  }

  return {
    read,
    async resolve(request) {
      const claims = await readChecked(request);
      if (!claims) return undefined;
      return claims.scope === 'master' ? { scope: 'master' } : { scope: 'org', orgId: claims.orgId, keyId: claims.keyId };
    },
    async resolveKey(request) {
      const claims = await readChecked(request);
      if (!claims) return undefined;
      if (claims.scope === 'org') {
        const key = await store.getKey(claims.keyId);
        const org = key && (await store.getOrganization(key.orgId));
        if (!key || !org) return undefined;
        const team = key.teamId ? ((await store.getTeam(key.teamId)) ?? null) : null;
        return { key, org, team };
      }
      const header = request.headers[ORG_HEADER];
      const orgId = Array.isArray(header) ? header[0] : header;
      if (!orgId) throw new GatewayError('invalid_request', `Choose an organization first (the ${ORG_HEADER} header).`, { param: ORG_HEADER });
      const org = await store.getOrganization(orgId);
      if (!org) throw new GatewayError('not_found', `Unknown organization '${orgId}'.`);
      return { key: masterStandInKey(org.id, now()), org, team: null };
    },
    start(request, reply, subject) {
      const { token, claims } = tokens.issue(subject, ttlMs);
      reply.header('set-cookie', cookieHeader(request, token, Math.floor(ttlMs / 1000)));
      return { csrfToken: tokens.csrfFor(claims), expiresAt: claims.expiresAt };
    },
    end(request, reply) {
      reply.header('set-cookie', cookieHeader(request, '', 0));
    },
    csrfFor: (claims) => tokens.csrfFor(claims),
  };
}
