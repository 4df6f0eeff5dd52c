import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Database } from '../../db/schema.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ChangeFeed } from '../../lib/change-feed.js';
import { newId } from '../../lib/ids.js';
import type { SecretBox } from '../../lib/secret-box.js';
import {
  credentialCreateInput,
  credentialUpdateInput,
  deploymentColumns,
  deploymentCreateInput,
  deploymentUpdateInput,
  deploymentView,
  modelColumns,
  modelCreateInput,
  modelRouteView,
  modelUpdateInput,
  timeoutsToJson,
} from '../../routing/catalog-admin-schemas.js';
import type { ModelCatalog } from '../../routing/model-catalog.js';
import type { Router } from '../../routing/create-router.js';
import type { ManagementAuth } from '../management-auth.js';
import { parseQuery } from '../parse-query.js';
import { pathParam } from '../path-param.js';
import { validateBody } from '../validate-body.js';

export interface DeploymentRoutesDependencies {
  auth: ManagementAuth;
  db: Kysely<Database>;
  catalog: ModelCatalog;
  router: Pick<Router, 'health'>;
  secretBox: SecretBox;
  /** Tells other instances to reload their catalog. */
  changes?: ChangeFeed;
  /** When given, deployments must name a registered provider. */
  providers?: { get(id: string): unknown };
  now?: () => number;
}

const deploymentsQuery = z.object({ model: z.string().optional() });
const idOf = (request: FastifyRequest) => pathParam(request.params, 'id');
/** Fastify has already decoded the wildcard once; decoding it again would break ids containing "%". */
const modelIdOf = (request: FastifyRequest) => pathParam(request.params, '*', 'id');

/**
 * Admin API of the routing catalog (docs/routing.md "Admin API"):
 * /api/admin/models, /api/admin/deployments, /api/admin/credentials (master only) and
 * GET /api/admin/deployments/health (master or org admin). Only database entries can change;
 * file and built-in entries are listed with their `source` and edited in the file.
 */
export function registerDeploymentRoutes(app: FastifyInstance, dependencies: DeploymentRoutesDependencies): void {
  const { auth, db, catalog, secretBox } = dependencies;
  const now = dependencies.now ?? Date.now;
  const schema = { tags: ['Admin', 'Routing'], security: [{ bearerAuth: [] }] };
  const hasApiKey = (deploymentId: string) => catalog.target(deploymentId)?.apiKey !== undefined;

  const requireMaster = async (request: FastifyRequest) => {
    const principal = await auth.requireAdmin(request);
    if (principal.scope !== 'master') {
      throw new GatewayError('permission_denied', 'Only the master credential can read or change models, deployments and credentials.');
    }
  };
  const changed = async () => {
    await catalog.reload();
    await dependencies.changes?.publish({ kind: 'catalog' });
  };

  app.get('/api/admin/deployments/health', { schema }, async (request) => {
    await auth.requireAdmin(request);
    const rows = await dependencies.router.health();
    return {
      object: 'list',
      data: rows.map((row) => ({
        object: 'deployment.health',
        model: row.model,
        deployment_id: row.deploymentId,
        provider: row.provider,
        upstream_model: row.upstreamModel,
        enabled: row.enabled,
        circuit: row.circuit,
        circuit_opened_at: row.circuitOpenedAt,
        circuit_reason: row.circuitReason,
        consecutive_failures: row.consecutiveFailures,
        latency_ms: row.latencyMs === null ? null : Math.round(row.latencyMs),
        time_to_first_token_ms: row.timeToFirstTokenMs === null ? null : Math.round(row.timeToFirstTokenMs),
        error_rate: Number(row.errorRate.toFixed(4)),
        samples: row.samples,
        in_flight: row.inFlight,
      })),
    };
  });

  // Models. Ids may contain "/" (e.g. "meta-llama/Llama-3.1-8B"), hence the wildcard.
  app.get('/api/admin/models', { schema }, async (request) => {
    await requireMaster(request);
    return { object: 'list', data: catalog.list().map((model) => modelRouteView(model, hasApiKey)) };
  });

  app.post('/api/admin/models', { schema }, async (request) => {
    await requireMaster(request);
    const input = validateBody(modelCreateInput, request.body);
    const existing = await db.selectFrom('models').select('id').where('id', '=', input.id).executeTakeFirst();
    if (existing) throw new GatewayError('conflict', `The model '${input.id}' already exists.`, { param: 'id' });
    await db
      .insertInto('models')
      .values({
        id: input.id,
        owned_by: input.owned_by,
        strategy: input.strategy,
        fallbacks: JSON.stringify(input.fallbacks),
        description: input.description ?? null,
        created_at: now(),
      })
      .execute();
    await changed();
    return modelRouteView(catalog.get(input.id)!, hasApiKey);
  });

  app.patch('/api/admin/models/*', { schema }, async (request) => {
    await requireMaster(request);
    const id = modelIdOf(request);
    const columns = modelColumns(validateBody(modelUpdateInput, request.body));
    // An UPDATE with no columns is not valid SQL: a PATCH naming no field only checks the model is editable.
    const found =
      Object.keys(columns).length > 0
        ? Number((await db.updateTable('models').set(columns).where('id', '=', id).executeTakeFirst()).numUpdatedRows) > 0
        : (await db.selectFrom('models').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
    if (!found) throw notEditable('model', id, catalog.get(id) !== undefined);
    await changed();
    return modelRouteView(catalog.get(id)!, hasApiKey);
  });

  app.delete('/api/admin/models/*', { schema }, async (request) => {
    await requireMaster(request);
    const id = modelIdOf(request);
    const deleted = await db.transaction().execute(async (transaction) => {
      const result = await transaction.deleteFrom('models').where('id', '=', id).executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) return false;
      await transaction.deleteFrom('deployments').where('model_id', '=', id).execute();
      return true;
    });
    if (!deleted) throw notEditable('model', id, catalog.get(id) !== undefined);
    await changed();
    return { id, object: 'model', deleted: true };
  });

  // Deployments.
  app.get('/api/admin/deployments', { schema }, async (request) => {
    await requireMaster(request);
    const { model } = parseQuery(deploymentsQuery, request.query);
    const deployments = catalog
      .list()
      .filter((entry) => model === undefined || entry.id === model)
      .flatMap((entry) => entry.deployments);
    return { object: 'list', data: deployments.map((deployment) => deploymentView(deployment, hasApiKey(deployment.id))) };
  });

  app.post('/api/admin/deployments', { schema }, async (request) => {
    await requireMaster(request);
    const input = validateBody(deploymentCreateInput, request.body);
    await checkReferences(input.provider, input.credential_id);
    const id = newId();
    await db
      .insertInto('deployments')
      .values({
        id,
        model_id: input.model,
        provider: input.provider,
        upstream_model: input.upstream_model,
        credential_id: input.credential_id ?? null,
        base_url: input.base_url ?? null,
        weight: input.weight ?? 1,
        priority: input.priority ?? 0,
        timeouts: timeoutsToJson(input.timeouts),
        rpm: input.rpm ?? null,
        tpm: input.tpm ?? null,
        pricing: input.pricing ? JSON.stringify(input.pricing) : null,
        settings: JSON.stringify(input.settings ?? {}),
        enabled: input.enabled === false ? 0 : 1,
        created_at: now(),
      })
      .execute();
    await changed();
    return deploymentView(findDeployment(id)!, hasApiKey(id));
  });

  app.patch('/api/admin/deployments/:id', { schema }, async (request) => {
    await requireMaster(request);
    const id = idOf(request);
    const input = validateBody(deploymentUpdateInput, request.body);
    await checkReferences(input.provider, input.credential_id);
    const columns = deploymentColumns(input);
    const existing = await db.selectFrom('deployments').select('id').where('id', '=', id).executeTakeFirst();
    if (!existing) throw notEditable('deployment', id, findDeployment(id) !== undefined);
    if (Object.keys(columns).length > 0) await db.updateTable('deployments').set(columns).where('id', '=', id).execute();
    await changed();
    return deploymentView(findDeployment(id)!, hasApiKey(id));
  });

  app.delete('/api/admin/deployments/:id', { schema }, async (request) => {
    await requireMaster(request);
    const id = idOf(request);
    const result = await db.deleteFrom('deployments').where('id', '=', id).executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw notEditable('deployment', id, findDeployment(id) !== undefined);
    await changed();
    return { id, object: 'deployment', deleted: true };
  });

  // Provider credentials: sealed with AES-256-GCM; the secret is never returned.
  const credentialView = (row: { id: string; name: string; provider: string; created_at: number }) => ({
    object: 'provider_credential',
    id: row.id,
    name: row.name,
    provider: row.provider,
    created_at: Number(row.created_at),
  });

  app.get('/api/admin/credentials', { schema }, async (request) => {
    await requireMaster(request);
    const rows = await db.selectFrom('provider_credentials').select(['id', 'name', 'provider', 'created_at']).orderBy('name').execute();
    return { object: 'list', data: rows.map(credentialView) };
  });

  app.post('/api/admin/credentials', { schema }, async (request) => {
    await requireMaster(request);
    const input = validateBody(credentialCreateInput, request.body);
    const duplicate = await db.selectFrom('provider_credentials').select('id').where('name', '=', input.name).executeTakeFirst();
    if (duplicate) throw new GatewayError('conflict', `A credential named '${input.name}' already exists.`, { param: 'name' });
    const row = {
      id: newId(),
      name: input.name,
      provider: input.provider,
      secret_ciphertext: secretBox.seal(JSON.stringify({ ...input.settings, ...(input.api_key ? { apiKey: input.api_key } : {}) })),
      created_at: now(),
    };
    await db.insertInto('provider_credentials').values(row).execute();
    return credentialView(row);
  });

  app.patch('/api/admin/credentials/:id', { schema }, async (request) => {
    await requireMaster(request);
    const id = idOf(request);
    const input = validateBody(credentialUpdateInput, request.body);
    const row = await db.selectFrom('provider_credentials').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw new GatewayError('not_found', `Unknown credential '${id}'.`);
    const secret = JSON.parse(secretBox.open(row.secret_ciphertext)) as Record<string, string>;
    const next = { ...secret, ...input.settings, ...(input.api_key ? { apiKey: input.api_key } : {}) };
    const updated = { ...row, name: input.name ?? row.name, provider: input.provider ?? row.provider };
    await db
      .updateTable('provider_credentials')
      .set({ name: updated.name, provider: updated.provider, secret_ciphertext: secretBox.seal(JSON.stringify(next)) })
      .where('id', '=', id)
      .execute();
    await changed();
    return credentialView(updated);
  });

  app.delete('/api/admin/credentials/:id', { schema }, async (request) => {
    await requireMaster(request);
    const id = idOf(request);
    const user = await db.selectFrom('deployments').select('id').where('credential_id', '=', id).executeTakeFirst();
    if (user) throw new GatewayError('conflict', `The credential is used by deployment '${user.id}'; change or delete that first.`);
    const result = await db.deleteFrom('provider_credentials').where('id', '=', id).executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw new GatewayError('not_found', `Unknown credential '${id}'.`);
    return { id, object: 'provider_credential', deleted: true };
  });

  function findDeployment(id: string) {
    return catalog
      .list()
      .flatMap((model) => model.deployments)
      .find((deployment) => deployment.id === id);
  }

  async function checkReferences(provider: string | undefined, credentialId: string | null | undefined) {
    if (provider !== undefined && dependencies.providers && !dependencies.providers.get(provider)) {
      throw new GatewayError('invalid_request', `Unknown provider '${provider}'.`, { param: 'provider' });
    }
    if (credentialId) {
      const credential = await db.selectFrom('provider_credentials').select('id').where('id', '=', credentialId).executeTakeFirst();
      if (!credential) throw new GatewayError('invalid_request', `Unknown credential '${credentialId}'.`, { param: 'credential_id' });
    }
  }
}

function notEditable(kind: 'model' | 'deployment', id: string, existsElsewhere: boolean): GatewayError {
  return existsElsewhere
    ? new GatewayError('conflict', `The ${kind} '${id}' comes from the config file or is built in; change it there.`)
    : new GatewayError('not_found', `Unknown ${kind} '${id}'.`);
}
