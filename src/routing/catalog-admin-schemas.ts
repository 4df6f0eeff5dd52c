import { z } from 'zod';
import type { DeploymentsTable, ModelsTable } from '../db/schema.js';
import { modelPriceSchema } from '../metering/model-price.js';
import { FALLBACK_REASONS, ROUTING_STRATEGIES, type Deployment, type ModelRoute } from './catalog-types.js';

/**
 * Admin API shapes for models, deployments and provider credentials (snake_case on the wire, the
 * same field names as the GW_CONFIG file). Secrets go in and never come out.
 */
const fallbackInput = z.strictObject({
  model: z.string().min(1).max(200),
  on: z.array(z.enum(FALLBACK_REASONS)).min(1).default(['any']),
});

export const modelCreateInput = z.strictObject({
  id: z.string().min(1).max(200),
  owned_by: z.string().min(1).max(100).default('gw'),
  strategy: z.enum(ROUTING_STRATEGIES).default('priority'),
  fallbacks: z.array(fallbackInput).max(10).default([]),
  description: z.string().max(1000).nullable().optional(),
});
export const modelUpdateInput = z.strictObject({
  owned_by: z.string().min(1).max(100).optional(),
  strategy: z.enum(ROUTING_STRATEGIES).optional(),
  fallbacks: z.array(fallbackInput).max(10).optional(),
  description: z.string().max(1000).nullable().optional(),
});

const timeoutsInput = z.strictObject({
  connect_ms: z.number().int().min(1).max(3_600_000).optional(),
  first_byte_ms: z.number().int().min(1).max(3_600_000).optional(),
  total_ms: z.number().int().min(1).max(3_600_000).optional(),
});

/** Deployment fields without defaults: the update schema is their partial, so a field left out of a PATCH stays as it is. */
const deploymentFields = {
  provider: z.string().min(1).max(100),
  upstream_model: z.string().min(1).max(300),
  credential_id: z.string().min(1).nullable().optional(),
  base_url: z.url().nullable().optional(),
  weight: z.number().int().min(0).max(1_000_000).optional(),
  priority: z.number().int().min(0).max(1_000_000).optional(),
  timeouts: timeoutsInput.optional(),
  rpm: z.number().int().min(1).nullable().optional(),
  tpm: z.number().int().min(1).nullable().optional(),
  pricing: modelPriceSchema.strict().nullable().optional(),
  settings: z.record(z.string(), z.string()).optional(),
  enabled: z.boolean().optional(),
};
export const deploymentCreateInput = z.strictObject({ model: z.string().min(1).max(200), ...deploymentFields });
export const deploymentUpdateInput = z.strictObject(deploymentFields).partial();

/** No field has a default, so the partial update schema leaves out fields unchanged. */
export const credentialCreateInput = z.strictObject({
  name: z.string().min(1).max(200),
  provider: z.string().min(1).max(100),
  api_key: z.string().min(1).max(10_000).optional(),
  /** Further secret settings (e.g. a Bedrock secret access key); stored sealed with the key. */
  settings: z.record(z.string(), z.string().max(10_000)).optional(),
});
export const credentialUpdateInput = credentialCreateInput.partial();

export function timeoutsToJson(timeouts: z.infer<typeof timeoutsInput> | undefined): string {
  return JSON.stringify({
    ...(timeouts?.connect_ms ? { connectMs: timeouts.connect_ms } : {}),
    ...(timeouts?.first_byte_ms ? { firstByteMs: timeouts.first_byte_ms } : {}),
    ...(timeouts?.total_ms ? { totalMs: timeouts.total_ms } : {}),
  });
}

/** The model columns an update sets: only the fields it names (possibly none). */
export function modelColumns(input: z.infer<typeof modelUpdateInput>): Partial<ModelsTable> {
  const columns: Partial<ModelsTable> = {};
  if (input.owned_by !== undefined) columns.owned_by = input.owned_by;
  if (input.strategy !== undefined) columns.strategy = input.strategy;
  if (input.fallbacks !== undefined) columns.fallbacks = JSON.stringify(input.fallbacks);
  if (input.description !== undefined) columns.description = input.description;
  return columns;
}

/** The row columns a create or update sets, from validated input. */
export function deploymentColumns(input: z.infer<typeof deploymentUpdateInput>): Partial<DeploymentsTable> {
  const columns: Partial<DeploymentsTable> = {};
  if (input.provider !== undefined) columns.provider = input.provider;
  if (input.upstream_model !== undefined) columns.upstream_model = input.upstream_model;
  if (input.credential_id !== undefined) columns.credential_id = input.credential_id;
  if (input.base_url !== undefined) columns.base_url = input.base_url;
  if (input.weight !== undefined) columns.weight = input.weight;
  if (input.priority !== undefined) columns.priority = input.priority;
  if (input.timeouts !== undefined) columns.timeouts = timeoutsToJson(input.timeouts);
  if (input.rpm !== undefined) columns.rpm = input.rpm;
  if (input.tpm !== undefined) columns.tpm = input.tpm;
  if (input.pricing !== undefined) columns.pricing = input.pricing === null ? null : JSON.stringify(input.pricing);
  if (input.settings !== undefined) columns.settings = JSON.stringify(input.settings);
  if (input.enabled !== undefined) columns.enabled = input.enabled ? 1 : 0;
  return columns;
}

export function deploymentView(deployment: Deployment, hasApiKey: boolean) {
  return {
    object: 'deployment',
    id: deployment.id,
    model: deployment.modelId,
    provider: deployment.provider,
    upstream_model: deployment.upstreamModel,
    credential_id: deployment.credentialId,
    base_url: deployment.baseUrl,
    weight: deployment.weight,
    priority: deployment.priority,
    timeouts: {
      connect_ms: deployment.timeouts.connectMs,
      first_byte_ms: deployment.timeouts.firstByteMs,
      total_ms: deployment.timeouts.totalMs,
    },
    rpm: deployment.rpm,
    tpm: deployment.tpm,
    pricing: deployment.pricing,
    settings: deployment.settings,
    enabled: deployment.enabled,
    source: deployment.source ?? 'database',
    has_api_key: hasApiKey,
  };
}

export function modelRouteView(model: ModelRoute, hasApiKey: (deploymentId: string) => boolean) {
  return {
    object: 'model',
    id: model.id,
    owned_by: model.ownedBy,
    created: Math.floor(model.createdAt / 1000),
    strategy: model.strategy,
    fallbacks: model.fallbacks,
    description: model.description,
    source: model.source ?? 'database',
    deployments: model.deployments.map((deployment) => deploymentView(deployment, hasApiKey(deployment.id))),
  };
}
