import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.js';
import type { KeyIssuer } from '../../keys/key-issuer.js';
import type { KeySpend } from '../../keys/key-spend.js';
import type { ChangeFeed } from '../../lib/change-feed.js';
import type { TenancyStore } from '../../tenancy/tenancy-store.js';
import type { VirtualKey } from '../../tenancy/tenancy-types.js';
import {
  keyCreateInput,
  keyUpdateInput,
  keyView,
  orgCreateInput,
  orgUpdateInput,
  orgView,
  settingsPatch,
  teamCreateInput,
  teamUpdateInput,
  teamView,
  toBudget,
} from '../admin-schemas.js';
import type { AdminPrincipal, ManagementAuth } from '../management-auth.js';
import { parseQuery } from '../parse-query.js';
import { pathParam } from '../path-param.js';
import { orgIdQuery } from '../resolve-admin-org.js';
import { validateBody } from '../validate-body.js';

export interface TenancyAdminDependencies {
  auth: ManagementAuth;
  store: TenancyStore;
  issuer: KeyIssuer;
  changes: ChangeFeed;
  /** Cumulative spend per key, shown as `spend_usd` on every key record. */
  spend: KeySpend;
}

const idOf = (request: FastifyRequest) => pathParam(request.params, 'id');

function requireMaster(principal: AdminPrincipal): void {
  if (principal.scope !== 'master') throw new GatewayError('permission_denied', 'Only the master credential can do this.');
}

function requireOrgAccess(principal: AdminPrincipal, orgId: string): void {
  if (principal.scope === 'org' && principal.orgId !== orgId) {
    // Same answer as a missing org: an org admin learns nothing about other orgs.
    throw new GatewayError('not_found', `Unknown organization '${orgId}'.`);
  }
}

/** Whether the principal may see a record of this org. Records of other orgs answer as unknown ids. */
function canSee(principal: AdminPrincipal, orgId: string): boolean {
  return principal.scope === 'master' || principal.orgId === orgId;
}

/** /api/admin/orgs, teams and keys. The master sees everything; an org admin only its org. */
export function registerTenancyAdminRoutes(app: FastifyInstance, dependencies: TenancyAdminDependencies): void {
  const { auth, store, issuer, changes, spend } = dependencies;
  const schema = { tags: ['Admin'], security: [{ bearerAuth: [] }] };

  /**
   * The key with this id, when the principal may see it. Another org's key is answered exactly like
   * an unknown one, so an org admin learns neither that it exists nor which org holds it.
   */
  async function keyInScope(principal: AdminPrincipal, id: string) {
    const key = await store.getKey(id);
    if (!key || !canSee(principal, key.orgId)) throw new GatewayError('not_found', `Unknown key '${id}'.`);
    return key;
  }

  async function teamInScope(principal: AdminPrincipal, id: string) {
    const team = await store.getTeam(id);
    if (!team || !canSee(principal, team.orgId)) throw new GatewayError('not_found', `Unknown team '${id}'.`);
    return team;
  }

  const keyRecord = async (key: VirtualKey) => keyView(key, await spend.ofKey(key.id));

  app.get('/api/admin/orgs', { schema }, async (request) => {
    const principal = await auth.requireAdmin(request);
    const orgs = principal.scope === 'org' ? [await store.getOrganization(principal.orgId)].filter((org) => org !== undefined) : await store.listOrganizations();
    return { object: 'list', data: orgs.map(orgView) };
  });

  app.post('/api/admin/orgs', { schema }, async (request) => {
    requireMaster(await auth.requireAdmin(request));
    const input = validateBody(orgCreateInput, request.body);
    const org = await store.createOrganization({
      name: input.name,
      tier: input.tier,
      customLimits: input.limits,
      enabledModels: input.enabled_models,
      budget: toBudget(input.budget),
      settings: settingsPatch(input.settings),
    });
    return orgView(org);
  });

  app.get('/api/admin/orgs/:id', { schema }, async (request) => {
    const principal = await auth.requireAdmin(request);
    const id = idOf(request);
    requireOrgAccess(principal, id);
    const org = await store.getOrganization(id);
    if (!org) throw new GatewayError('not_found', `Unknown organization '${id}'.`);
    return orgView(org);
  });

  app.patch('/api/admin/orgs/:id', { schema }, async (request) => {
    const principal = await auth.requireAdmin(request);
    const id = idOf(request);
    requireOrgAccess(principal, id);
    const input = validateBody(orgUpdateInput, request.body);
    if (principal.scope === 'org' && (input.tier !== undefined || input.limits !== undefined || input.enabled_models !== undefined)) {
      throw new GatewayError('permission_denied', 'Only the master credential can change an organization\'s tier, limits or models.');
    }
    const org = await store.updateOrganization(id, {
      name: input.name,
      tier: input.tier,
      customLimits: input.limits,
      enabledModels: input.enabled_models,
      budget: toBudget(input.budget),
      settings: settingsPatch(input.settings),
    });
    if (!org) throw new GatewayError('not_found', `Unknown organization '${id}'.`);
    await changes.publish({ kind: 'org', id });
    return orgView(org);
  });

  app.get('/api/admin/orgs/:id/teams', { schema }, async (request) => {
    const principal = await auth.requireAdmin(request);
    const id = idOf(request);
    requireOrgAccess(principal, id);
    return { object: 'list', data: (await store.listTeams(id)).map(teamView) };
  });

  app.post('/api/admin/orgs/:id/teams', { schema }, async (request) => {
    const principal = await auth.requireAdmin(request);
    const id = idOf(request);
    requireOrgAccess(principal, id);
    if (!(await store.getOrganization(id))) throw new GatewayError('not_found', `Unknown organization '${id}'.`);
    const input = validateBody(teamCreateInput, request.body);
    const team = await store.createTeam({ orgId: id, name: input.name, allowedModels: input.allowed_models, budget: toBudget(input.budget) });
    return teamView(team);
  });

  app.patch('/api/admin/teams/:id', { schema }, async (request) => {
    const principal = await auth.requireAdmin(request);
    const id = idOf(request);
    await teamInScope(principal, id);
    const input = validateBody(teamUpdateInput, request.body);
    const team = await store.updateTeam(id, { name: input.name, allowedModels: input.allowed_models, budget: toBudget(input.budget) });
    await changes.publish({ kind: 'team', id });
    return teamView(team!);
  });

  app.get('/api/admin/keys', { schema }, async (request) => {
    const principal = await auth.requireAdmin(request);
    const query = parseQuery(orgIdQuery, request.query);
    const orgId = principal.scope === 'org' ? principal.orgId : query.org_id;
    // One grouped spend query for the whole list, not one per key.
    const [keys, spent] = await Promise.all([store.listKeys(orgId), spend.byKey(orgId)]);
    return { object: 'list', data: keys.map((key) => keyView(key, spent.get(key.id) ?? 0)) };
  });

  app.post('/api/admin/keys', { schema }, async (request) => {
    const principal = await auth.requireAdmin(request);
    const input = validateBody(keyCreateInput, request.body);
    const orgId = principal.scope === 'org' ? principal.orgId : input.org_id;
    if (!orgId) throw new GatewayError('invalid_request', "Missing required parameter: 'org_id'.", { param: 'org_id' });
    requireOrgAccess(principal, orgId);
    const { key, secret } = await issuer.issue({
      orgId,
      teamId: input.team_id,
      name: input.name,
      role: input.role,
      budget: toBudget(input.budget),
      userBudget: toBudget(input.user_budget),
      limits: input.limits,
      userLimits: input.user_limits,
      allowedModels: input.allowed_models,
    });
    // The only time the full key is ever returned.
    return { ...keyView(key, 0), key: secret };
  });

  app.get('/api/admin/keys/:id', { schema }, async (request) => {
    const principal = await auth.requireAdmin(request);
    const id = idOf(request);
    return keyRecord(await keyInScope(principal, id));
  });

  app.patch('/api/admin/keys/:id', { schema }, async (request) => {
    const principal = await auth.requireAdmin(request);
    const id = idOf(request);
    await keyInScope(principal, id);
    const input = validateBody(keyUpdateInput, request.body);
    const key = await issuer.update(id, {
      name: input.name,
      teamId: input.team_id,
      budget: toBudget(input.budget),
      userBudget: toBudget(input.user_budget),
      limits: input.limits,
      userLimits: input.user_limits,
      allowedModels: input.allowed_models,
    });
    return keyRecord(key);
  });

  const revoke = async (request: Parameters<ManagementAuth['requireAdmin']>[0]) => {
    const principal = await auth.requireAdmin(request);
    const id = idOf(request);
    await keyInScope(principal, id);
    return keyRecord(await issuer.revoke(id));
  };
  app.post('/api/admin/keys/:id/revoke', { schema }, revoke);
  app.delete('/api/admin/keys/:id', { schema }, revoke);
}
