import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.js';
import { modelPriceSchema, type ModelPrice } from '../../metering/model-price.js';
import type { PriceListEntry, PricingCatalog } from '../../metering/pricing-catalog.js';
import type { ModelCatalog } from '../../routing/model-catalog.js';
import type { ManagementAuth } from '../management-auth.js';
import { isModelVisible } from '../../tenancy/model-visibility.js';
import { pathParam } from '../path-param.js';
import { validateBody } from '../validate-body.js';

export interface PricingRoutesDependencies {
  auth: ManagementAuth;
  pricing: PricingCatalog;
  /** When given, the price list covers the catalog's models the caller can see; otherwise every priced model. */
  catalog?: ModelCatalog;
  orgExists(orgId: string): Promise<boolean>;
}

/** Prices as the API shows them: USD decimal strings, per million tokens/characters, per image, minute, unit, page or second. */
function priceView(model: string, price: ModelPrice | undefined) {
  return { object: 'model_price', model, currency: 'USD', priced: price !== undefined, pricing: price ?? null };
}

/**
 * A listed model's price as calls are charged (pricing-catalog.ts, `list`): `pricing` is the
 * primary deployment's; when its deployments are charged differently, `deployment_pricing` holds
 * each distinct price (primary first) and `priced` says whether all of them are priced.
 */
function listedPriceView(entry: PriceListEntry) {
  const view = priceView(entry.model, entry.price);
  if (!entry.deploymentPrices) return view;
  return {
    ...view,
    priced: entry.deploymentPrices.every((price) => price !== undefined),
    deployment_pricing: entry.deploymentPrices.map((price) => price ?? null),
  };
}

// Over-long ids never get here: the router answers any path parameter over 200 characters 404.
const modelIdOf = (request: FastifyRequest) => pathParam(request.params, 'modelId');
const orgIdOf = (request: FastifyRequest) => pathParam(request.params, 'orgId');

/**
 * GET /api/models/pricing (the caller org's effective prices), and the master's price overrides:
 * PUT/DELETE /api/admin/pricing/:modelId (global) and /api/admin/orgs/:orgId/pricing/:modelId.
 * Overrides are master-only: an org admin setting its own prices would set its own bill.
 */
export function registerPricingRoutes(app: FastifyInstance, dependencies: PricingRoutesDependencies): void {
  const { auth, pricing, catalog } = dependencies;
  const adminSchema = { tags: ['Admin', 'Pricing'], security: [{ bearerAuth: [] }] };

  async function requireMaster(request: Parameters<ManagementAuth['requireAdmin']>[0]): Promise<void> {
    const principal = await auth.requireAdmin(request);
    if (principal.scope !== 'master') throw new GatewayError('permission_denied', 'Only the master credential can change prices.');
  }

  app.get('/api/models/pricing', { schema: { tags: ['Pricing'], security: [{ bearerAuth: [] }] } }, async (request) => {
    const caller = await auth.requireKey(request);
    const ids = catalog ? catalog.list().map((model) => model.id).filter((id) => isModelVisible(caller, id)) : undefined;
    const deploymentsOf = catalog ? (modelId: string) => catalog.get(modelId)?.deployments : undefined;
    return { object: 'list', data: pricing.list(caller.org.id, ids, deploymentsOf).map(listedPriceView) };
  });

  app.put('/api/admin/pricing/:modelId', { schema: adminSchema }, async (request) => {
    await requireMaster(request);
    const modelId = modelIdOf(request);
    const price = validateBody(modelPriceSchema.strict(), request.body);
    await pricing.setOverride(modelId, '', price);
    return { ...priceView(modelId, pricing.priceFor(modelId, '')), scope: 'global' };
  });

  app.delete('/api/admin/pricing/:modelId', { schema: adminSchema }, async (request) => {
    await requireMaster(request);
    const modelId = modelIdOf(request);
    return { model: modelId, scope: 'global', deleted: await pricing.removeOverride(modelId, '') };
  });

  app.put('/api/admin/orgs/:orgId/pricing/:modelId', { schema: adminSchema }, async (request) => {
    await requireMaster(request);
    const orgId = orgIdOf(request);
    const modelId = modelIdOf(request);
    if (!(await dependencies.orgExists(orgId))) throw new GatewayError('not_found', `Unknown organization '${orgId}'.`);
    const price = validateBody(modelPriceSchema.strict(), request.body);
    await pricing.setOverride(modelId, orgId, price);
    return { ...priceView(modelId, pricing.priceFor(modelId, orgId)), scope: 'org', org_id: orgId };
  });

  app.delete('/api/admin/orgs/:orgId/pricing/:modelId', { schema: adminSchema }, async (request) => {
    await requireMaster(request);
    const orgId = orgIdOf(request);
    const modelId = modelIdOf(request);
    return { model: modelId, scope: 'org', org_id: orgId, deleted: await pricing.removeOverride(modelId, orgId) };
  });
}
