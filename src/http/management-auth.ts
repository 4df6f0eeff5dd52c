import type { FastifyRequest } from 'fastify';
import type { AuthContext } from '../tenancy/tenancy-types.js';

/** Who is calling a management endpoint. */
export type AdminPrincipal =
  | { scope: 'master' }
  /** An org-admin key (or dashboard session of one): sees and changes only its org. */
  | { scope: 'org'; orgId: string; keyId: string };

/**
 * Authentication for non-inference routes. Route files receive this in their dependencies and call
 * it first; both throw GatewayError (401 invalid_api_key, 403 permission_denied) on failure.
 */
export interface ManagementAuth {
  /** Any active virtual key of an org (the spec's /gw/* and /api/* endpoints use the bearer key). */
  requireKey(request: FastifyRequest): Promise<AuthContext>;
  /** The master credential, an org-admin key, or a dashboard session; checks CSRF on state-changing calls. */
  requireAdmin(request: FastifyRequest): Promise<AdminPrincipal>;
}

/** The org an admin principal may act on: its own, or the one named (master only). Throws 403/400 otherwise. */
export function orgScopeOf(principal: AdminPrincipal, requestedOrgId: string | undefined): string | undefined {
  if (principal.scope === 'org') return principal.orgId;
  return requestedOrgId;
}
