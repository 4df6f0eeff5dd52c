import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.js';
import { type ManagementAuth, orgScopeOf } from './management-auth.js';

/** The `org_id` a master caller names to pick an org (an org admin's own org wins regardless). */
export const orgIdQuery = z.object({ org_id: z.string().min(1).optional() });

/** The one org an admin call acts on: 400 when the master names none, 404 when it does not exist. */
export type AdminOrgResolver = (request: FastifyRequest, requestedOrgId: string | undefined) => Promise<string>;

/** `orgExists` is optional: without it any named org is accepted (the store then finds nothing in it). */
export function createAdminOrgResolver(auth: ManagementAuth, orgExists?: (orgId: string) => Promise<boolean>): AdminOrgResolver {
  return async (request, requestedOrgId) => {
    const orgId = orgScopeOf(await auth.requireAdmin(request), requestedOrgId);
    if (!orgId) throw new GatewayError('invalid_request', "Missing required parameter: 'org_id'.", { param: 'org_id' });
    if (orgExists && !(await orgExists(orgId))) throw new GatewayError('not_found', `No organization '${orgId}'.`, { param: 'org_id' });
    return orgId;
  };
}
