import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { modelPriceSchema } from '../metering/model-price.js';
import { FALLBACK_REASONS, ROUTING_STRATEGIES } from './catalog-types.js';
import type { CircuitOptions } from './circuit-store.js';
import type { RetryPolicy } from './retry-policy.js';

/**
 * The `models` section of the GW_CONFIG file (YAML, or JSON which YAML also reads). Other sections
 * belong to other features, so the top level is loose; model and deployment entries are strict so
 * a misspelt field stops start-up instead of being ignored.
 */
const timeoutsSchema = z.strictObject({
  connect_ms: z.number().int().min(1).optional(),
  first_byte_ms: z.number().int().min(1).optional(),
  total_ms: z.number().int().min(1).optional(),
});

export const fileDeploymentSchema = z
  .strictObject({
    id: z.string().min(1).optional(),
    provider: z.string().min(1),
    upstream_model: z.string().min(1),
    base_url: z.url().optional(),
    api_key: z.string().min(1).optional(),
    /** Name of the environment variable holding the key, so the file itself carries no secret. */
    api_key_env: z.string().min(1).optional(),
    weight: z.number().int().min(0).default(1),
    priority: z.number().int().min(0).default(0),
    timeouts: timeoutsSchema.optional(),
    rpm: z.number().int().min(1).optional(),
    tpm: z.number().int().min(1).optional(),
    settings: z.record(z.string(), z.string()).default({}),
    pricing: modelPriceSchema.optional(),
    enabled: z.boolean().default(true),
  })
  .refine((deployment) => !(deployment.api_key && deployment.api_key_env), {
    message: 'set api_key or api_key_env, not both',
    path: ['api_key_env'],
  });

export const fileModelSchema = z.strictObject({
  id: z.string().min(1),
  owned_by: z.string().min(1).optional(),
  description: z.string().optional(),
  strategy: z.enum(ROUTING_STRATEGIES).default('priority'),
  fallbacks: z
    .array(z.strictObject({ model: z.string().min(1), on: z.array(z.enum(FALLBACK_REASONS)).min(1).default(['any']) }))
    .default([]),
  pricing: modelPriceSchema.optional(),
  deployments: z.array(fileDeploymentSchema).default([]),
});

/** Gateway-wide routing knobs (docs/routing.md); absent fields keep the defaults. */
export const routingSectionSchema = z.strictObject({
  retries: z
    .strictObject({
      max_retries: z.number().int().min(0).max(10).optional(),
      base_delay_ms: z.number().int().min(0).optional(),
      max_delay_ms: z.number().int().min(0).optional(),
      max_retry_after_ms: z.number().int().min(0).optional(),
      max_elapsed_ms: z.number().int().min(1).optional(),
    })
    .optional(),
  circuit: z
    .strictObject({
      consecutive_failures: z.number().int().min(1).optional(),
      failure_rate: z.number().gt(0).max(1).optional(),
      minimum_calls: z.number().int().min(1).optional(),
      window_ms: z.number().int().min(1).optional(),
      cool_down_ms: z.number().int().min(1).optional(),
    })
    .optional(),
});

export const catalogFileSchema = z.looseObject({
  models: z.array(fileModelSchema).default([]),
  routing: routingSectionSchema.optional(),
});

export type CatalogFile = z.infer<typeof catalogFileSchema>;
export type FileModel = z.infer<typeof fileModelSchema>;
export type FileDeployment = z.infer<typeof fileDeploymentSchema>;

/** Environment variables by name; passed in because only config/ reads process.env. */
export interface RoutingSettings {
  retryPolicy: Partial<RetryPolicy>;
  circuit: Partial<CircuitOptions>;
}

/** The file's `routing` section as router and circuit-store options (empty = defaults). */
export function routingSettingsOf(file: CatalogFile | undefined): RoutingSettings {
  const retries = file?.routing?.retries ?? {};
  const circuit = file?.routing?.circuit ?? {};
  const defined = <T extends object>(value: T) =>
    Object.fromEntries(Object.entries(value).filter((entry) => entry[1] !== undefined)) as Partial<T>;
  return {
    retryPolicy: defined({
      maxRetries: retries.max_retries,
      baseDelayMs: retries.base_delay_ms,
      maxDelayMs: retries.max_delay_ms,
      maxRetryAfterMs: retries.max_retry_after_ms,
      maxElapsedMs: retries.max_elapsed_ms,
    }),
    circuit: defined({
      consecutiveFailures: circuit.consecutive_failures,
      failureRate: circuit.failure_rate,
      minimumCalls: circuit.minimum_calls,
      windowMs: circuit.window_ms,
      coolDownMs: circuit.cool_down_ms,
    }),
  };
}

export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * Parses and validates the file text. Failures name the file and the field path
 * (`models.0.deployments.1.weight: …`) and are meant to stop start-up.
 */
export function parseCatalogFile(text: string, environment: Environment, fileName = 'GW_CONFIG'): CatalogFile {
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (error) {
    throw new Error(`${fileName}: not valid YAML or JSON: ${(error as Error).message}`);
  }
  const parsed = catalogFileSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new Error(`${fileName}: invalid configuration: ${problems.join('; ')}`);
  }
  const problems: string[] = [];
  const ids = new Set<string>();
  parsed.data.models.forEach((model, modelIndex) => {
    if (ids.has(model.id)) problems.push(`models.${modelIndex}.id: duplicate model id "${model.id}"`);
    ids.add(model.id);
    model.deployments.forEach((deployment, deploymentIndex) => {
      if (!deployment.api_key_env) return;
      const value = environment[deployment.api_key_env];
      if (value === undefined || value === '') {
        problems.push(
          `models.${modelIndex}.deployments.${deploymentIndex}.api_key_env: environment variable ${deployment.api_key_env} is not set`,
        );
      } else {
        deployment.api_key = value;
      }
    });
  });
  if (problems.length > 0) throw new Error(`${fileName}: invalid configuration: ${problems.join('; ')}`);
  return parsed.data;
}

export async function loadCatalogFile(path: string, environment: Environment): Promise<CatalogFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new Error(`GW_CONFIG: cannot read ${path}: ${(error as Error).message}`);
  }
  return parseCatalogFile(text, environment, `GW_CONFIG (${path})`);
}
