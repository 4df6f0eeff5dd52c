import type {} from '@fastify/swagger';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { isUniqueViolation } from '../../db/is-unique-violation.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { type ChatModelDirectory, checkTargetModel, checkVariantModels } from '../../experiments/check-variant-models.js';
import type { ExperimentStatsRecorder } from '../../experiments/experiment-stats-recorder.js';
import { type Experiment, experimentCreateSchema, experimentUpdateSchema, type Variant } from '../../experiments/experiment-types.js';
import type { ExperimentStore } from '../../experiments/sql-experiment-store.js';
import { formatUsd } from '../../metering/format-usd.js';
import type { TemplateStore } from '../../templates/sql-template-store.js';
import type { ManagementAuth } from '../management-auth.js';
import { parseQuery } from '../parse-query.js';
import { createAdminOrgResolver, orgIdQuery } from '../resolve-admin-org.js';
import { validateBody } from '../validate-body.js';

export interface ExperimentRouteDependencies {
  auth: ManagementAuth;
  store: ExperimentStore;
  stats: Pick<ExperimentStatsRecorder, 'flush'>;
  /** Template experiments are checked against the org's templates and their versions. */
  templates?: Pick<TemplateStore, 'getVersion'>;
  orgExists?(orgId: string): Promise<boolean>;
  /** Model targets and variant models are checked against the catalog (known, chat-capable) and the org's enabled models. */
  models?: ChatModelDirectory;
  enabledModels?(orgId: string): Promise<readonly string[] | null>;
}

/** A/B experiments (issue 5): CRUD and per-variant outcome statistics under /api/admin/experiments. */
export function registerExperimentRoutes(app: FastifyInstance, dependencies: ExperimentRouteDependencies): void {
  const { auth, store } = dependencies;

  const adminOrg = createAdminOrgResolver(auth, dependencies.orgExists);
  const queryOrg = (request: FastifyRequest) => parseQuery(orgIdQuery, request.query).org_id;
  const updateBody = experimentUpdateSchema.extend({ org_id: z.string().min(1).optional() });

  async function found(orgId: string, id: string): Promise<Experiment> {
    const experiment = await store.get(orgId, id);
    if (!experiment) throw new GatewayError('not_found', `No experiment with id '${id}' in this organization.`, { param: 'id' });
    return experiment;
  }

  async function checkTemplateVariants(orgId: string, templateId: string, variants: Variant[]): Promise<void> {
    if (!dependencies.templates) return;
    if (!(await dependencies.templates.getVersion(orgId, templateId))) {
      throw new GatewayError('invalid_request', `No prompt template '${templateId}' in this organization.`, { param: 'target' });
    }
    for (const variant of variants) {
      if (variant.template_version !== undefined && !(await dependencies.templates.getVersion(orgId, templateId, variant.template_version))) {
        throw new GatewayError('invalid_request', `Variant '${variant.name}': template version ${variant.template_version} does not exist.`, { param: 'variants' });
      }
    }
  }

  /** `targetModel` is the target of a model experiment being created; variants' models are checked whenever variants are written. */
  async function checkModels(orgId: string, variants: Variant[], targetModel?: string): Promise<void> {
    if (!dependencies.models) return;
    if (targetModel === undefined && variants.every((variant) => variant.model === undefined)) return;
    const enabledModels = (await dependencies.enabledModels?.(orgId)) ?? null;
    if (targetModel !== undefined) checkTargetModel(targetModel, dependencies.models, enabledModels);
    checkVariantModels(variants, dependencies.models, enabledModels);
  }

  app.get('/api/admin/experiments', { schema: { tags: ['Experiments'], security: [{ bearerAuth: [] }] } }, async (request) => {
    const orgId = await adminOrg.fromQuery(request);
    return { object: 'list', data: (await store.list(orgId)).map(toPublicExperiment) };
  });

  app.post('/api/admin/experiments', { schema: { tags: ['Experiments'], security: [{ bearerAuth: [] }] } }, async (request) => {
    const principal = await auth.requireAdmin(request);
    const body = validateBody(experimentCreateSchema, request.body);
    const orgId = await adminOrg.forPrincipal(principal, body.org_id);
    if (body.target_kind === 'template') await checkTemplateVariants(orgId, body.target, body.variants);
    await checkModels(orgId, body.variants, body.target_kind === 'model' ? body.target : undefined);
    try {
      const experiment = await store.create({
        orgId,
        name: body.name,
        targetKind: body.target_kind,
        target: body.target,
        variants: body.variants,
        status: body.status,
      });
      return toPublicExperiment(experiment);
    } catch (error) {
      throw duplicateName(error, body.name);
    }
  });

  app.get<{ Params: { id: string } }>('/api/admin/experiments/:id', async (request) => {
    const orgId = await adminOrg.fromQuery(request);
    return toPublicExperiment(await found(orgId, request.params.id));
  });

  app.patch<{ Params: { id: string } }>('/api/admin/experiments/:id', async (request) => {
    const principal = await auth.requireAdmin(request);
    const body = validateBody(updateBody, request.body);
    const orgId = await adminOrg.forPrincipal(principal, body.org_id ?? queryOrg(request));
    const existing = await found(orgId, request.params.id);
    if (body.variants && existing.targetKind === 'template') await checkTemplateVariants(orgId, existing.target, body.variants);
    if (body.variants) await checkModels(orgId, body.variants);
    if (body.variants && existing.targetKind === 'model' && body.variants.some((variant) => variant.template_version !== undefined)) {
      throw new GatewayError('invalid_request', 'template_version applies only to template experiments.', { param: 'variants' });
    }
    try {
      const updated = await store.update(orgId, existing.id, { name: body.name, variants: body.variants, status: body.status });
      return toPublicExperiment(updated ?? existing);
    } catch (error) {
      throw duplicateName(error, body.name ?? existing.name);
    }
  });

  app.delete<{ Params: { id: string } }>('/api/admin/experiments/:id', async (request) => {
    const orgId = await adminOrg.fromQuery(request);
    if (!(await store.delete(orgId, request.params.id))) await found(orgId, request.params.id);
    return { id: request.params.id, object: 'experiment', deleted: true };
  });

  app.get<{ Params: { id: string } }>('/api/admin/experiments/:id/stats', async (request) => {
    const orgId = await adminOrg.fromQuery(request);
    const experiment = await found(orgId, request.params.id);
    // Totals are flushed from memory in batches; flush so the answer includes calls just made here.
    await dependencies.stats.flush();
    const rows = new Map((await store.stats(experiment.id)).map((row) => [row.variant, row]));
    const names = [...experiment.variants.map((variant) => variant.name), ...[...rows.keys()].filter((name) => !experiment.variants.some((variant) => variant.name === name))];
    return {
      object: 'experiment.stats',
      experiment_id: experiment.id,
      name: experiment.name,
      variants: names.map((name) => {
        const row = rows.get(name);
        const calls = row?.calls ?? 0;
        return {
          name,
          weight: experiment.variants.find((variant) => variant.name === name)?.weight ?? null,
          calls,
          errors: row?.errors ?? 0,
          error_rate: calls ? (row?.errors ?? 0) / calls : 0,
          avg_latency_ms: calls ? Math.round((row?.latencyMsTotal ?? 0) / calls) : null,
          prompt_tokens: row?.promptTokens ?? 0,
          completion_tokens: row?.completionTokens ?? 0,
          cost_usd: formatUsd(row?.costNanos ?? 0),
        };
      }),
    };
  });
}

function toPublicExperiment(experiment: Experiment) {
  return {
    id: experiment.id,
    object: 'experiment',
    org_id: experiment.orgId,
    name: experiment.name,
    target_kind: experiment.targetKind,
    target: experiment.target,
    variants: experiment.variants,
    status: experiment.status,
    created_at: Math.floor(experiment.createdAt / 1000),
    updated_at: Math.floor(experiment.updatedAt / 1000),
  };
}

function duplicateName(error: unknown, name: string): unknown {
  if (isUniqueViolation(error)) return new GatewayError('conflict', `An experiment named '${name}' already exists in this organization.`, { param: 'name' });
  return error;
}
