import { z } from 'zod';
import { parseUsdNanos, formatUsd } from '../metering/format-usd.js';
import type { Budget, Organization, Team, VirtualKey } from '../tenancy/tenancy-types.js';

/** Admin API shapes (snake_case on the wire, like the rest of the API). Money is a USD decimal string. */
const usdAmount = z
  .string()
  .regex(/^\d+(\.\d{1,9})?$/, 'a USD amount as a decimal string, e.g. "25.00"')
  .refine((value) => {
    try {
      parseUsdNanos(value);
      return true;
    } catch {
      return false;
    }
  }, 'amount too large');

export const budgetInput = z.strictObject({
  limit_usd: usdAmount,
  period: z.enum(['none', 'daily', 'weekly', 'monthly']).default('none'),
  thresholds: z.array(z.number().gt(0).max(10)).max(10).default([0.5, 0.8, 1]),
});

export const limitsInput = z.strictObject({
  rpm: z.number().int().min(1).optional(),
  tpm: z.number().int().min(1).optional(),
  tps: z.number().int().min(1).optional(),
});

const modelList = z.array(z.string().min(1)).max(1000);

const tierInput = z.enum(['tier1', 'tier2', 'tier3', 'enterprise']);

/** Org fields without defaults: the update schema is their partial, so a field left out of a PATCH stays as it is. */
const orgFields = {
  name: z.string().min(1).max(200),
  tier: tierInput.optional(),
  limits: limitsInput.optional(),
  enabled_models: modelList.nullable().optional(),
  budget: budgetInput.nullable().optional(),
  settings: z
    .strictObject({
      cache_default: z.boolean().optional(),
      cache_ttl_seconds: z.number().int().min(1).max(30 * 86400).optional(),
      allow_unpriced_models: z.boolean().optional(),
      default_prompt_template_id: z.uuid().nullable().optional(),
      log_message_contents: z.boolean().optional(),
    })
    .optional(),
};
export const orgCreateInput = z.strictObject({ ...orgFields, tier: tierInput.default('tier1') });
export const orgUpdateInput = z.strictObject(orgFields).partial();

export const teamCreateInput = z.strictObject({
  name: z.string().min(1).max(200),
  allowed_models: modelList.nullable().optional(),
  budget: budgetInput.nullable().optional(),
});
export const teamUpdateInput = teamCreateInput.partial();

/** Key fields a PATCH may change; none has a default, so a field left out stays as it is. */
const keyFields = {
  name: z.string().min(1).max(200),
  team_id: z.uuid().nullable().optional(),
  budget: budgetInput.nullable().optional(),
  user_budget: budgetInput.nullable().optional(),
  limits: limitsInput.optional(),
  user_limits: limitsInput.nullable().optional(),
  allowed_models: modelList.nullable().optional(),
};
export const keyCreateInput = z.strictObject({
  org_id: z.uuid().optional(),
  ...keyFields,
  role: z.enum(['inference', 'org_admin']).default('inference'),
});
export const keyUpdateInput = z.strictObject(keyFields).partial();

export function toBudget(input: z.infer<typeof budgetInput> | null | undefined): Budget | null | undefined {
  if (input === undefined) return undefined;
  if (input === null) return null;
  return { limitNanos: parseUsdNanos(input.limit_usd), period: input.period, thresholds: input.thresholds };
}

function budgetView(budget: Budget | null) {
  return budget && { limit_usd: formatUsd(budget.limitNanos), period: budget.period, thresholds: budget.thresholds };
}

export function orgView(org: Organization) {
  return {
    id: org.id,
    object: 'organization',
    name: org.name,
    tier: org.tier,
    limits: org.customLimits,
    enabled_models: org.enabledModels,
    budget: budgetView(org.budget),
    settings: {
      cache_default: org.settings.cacheDefault,
      cache_ttl_seconds: org.settings.cacheTtlSeconds,
      allow_unpriced_models: org.settings.allowUnpricedModels,
      default_prompt_template_id: org.settings.defaultPromptTemplateId,
      log_message_contents: org.settings.logMessageContents,
    },
    created_at: Math.floor(org.createdAt / 1000),
  };
}

export function teamView(team: Team) {
  return {
    id: team.id,
    object: 'team',
    org_id: team.orgId,
    name: team.name,
    allowed_models: team.allowedModels,
    budget: budgetView(team.budget),
    created_at: Math.floor(team.createdAt / 1000),
  };
}

/** A key as listed: alias only, never the secret or its hash; `spendNanos` is its cumulative spend. */
export function keyView(key: VirtualKey, spendNanos: number) {
  return {
    id: key.id,
    object: 'virtual_key',
    org_id: key.orgId,
    team_id: key.teamId,
    name: key.name,
    key_alias: key.alias,
    role: key.role,
    status: key.status,
    budget: budgetView(key.budget),
    user_budget: budgetView(key.userBudget),
    limits: key.limits,
    user_limits: key.userLimits,
    allowed_models: key.allowedModels,
    spend_usd: formatUsd(spendNanos),
    created_at: Math.floor(key.createdAt / 1000),
    last_used_at: key.lastUsedAt === null ? null : Math.floor(key.lastUsedAt / 1000),
    revoked_at: key.revokedAt === null ? null : Math.floor(key.revokedAt / 1000),
  };
}

export function settingsPatch(input: z.infer<typeof orgCreateInput>['settings']) {
  if (!input) return undefined;
  const patch: Record<string, unknown> = {};
  if (input.cache_default !== undefined) patch.cacheDefault = input.cache_default;
  if (input.cache_ttl_seconds !== undefined) patch.cacheTtlSeconds = input.cache_ttl_seconds;
  if (input.allow_unpriced_models !== undefined) patch.allowUnpricedModels = input.allow_unpriced_models;
  if (input.default_prompt_template_id !== undefined) patch.defaultPromptTemplateId = input.default_prompt_template_id;
  if (input.log_message_contents !== undefined) patch.logMessageContents = input.log_message_contents;
  return patch;
}
