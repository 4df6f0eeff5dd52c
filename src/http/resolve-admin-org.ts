import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.js';
import { type AdminPrincipal, type ManagementAuth, orgScopeOf } from './management-auth.js';
import { parseQuery } from './parse-query.js';

/** The `org_id` a master caller names to pick an org (an org admin's own org wins regardless). */
export const orgIdQuery = z.object({ org_id: z.string().min(1).optional() });

/**
 * The one org an admin call acts on: 400 when the master names none, 404 when it does not exist.
 * Credentials are checked before anything the caller sent is read, so a caller without a valid
 * admin credential gets 401/403 whatever its query or body holds.
 */
export interface AdminOrgResolver {
  /** Authenticates the caller, then reads the org from the `org_id` query parameter. */
  fromQuery(request: FastifyRequest): Promise<string>;
  /** The org for a caller already authenticated: writes check the credential, then the body, then this. */
  forPrincipal(principal: AdminPrincipal, requestedOrgId: string | undefined): Promise<string>;
}

/** `orgExists` is optional: without it any named org is accepted (the store then finds nothing in it). */
export function createAdminOrgResolver(auth: ManagementAuth, orgExists?: (orgId: string) => Promise<boolean>): AdminOrgResolver {
  const forPrincipal = async (principal: AdminPrincipal, requestedOrgId: string | undefined) => {
    const orgId = orgScopeOf(principal, requestedOrgId);
    if (!orgId) throw new GatewayError('invalid_request', "Missing required parameter: 'org_id'.", { param: 'org_id' });
    if (orgExists && !(await orgExists(orgId))) throw new GatewayError('not_found', `No organization '${orgId}'.`, { param: 'org_id' });
    return orgId;
  };
  return {
    forPrincipal,
    async fromQuery(request) {
      const principal = await auth.requireAdmin(request);
      return forPrincipal(principal, parseQuery(orgIdQuery, request.query).org_id);
    },
  };
}
