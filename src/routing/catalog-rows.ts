import type { Kysely } from 'kysely';
import type { Database, DeploymentsTable, ModelsTable } from '../db/schema.js';
import { modelPriceSchema, type ModelPrice } from '../metering/model-price.js';
import type { Timeouts } from '../providers/provider.js';
import {
  DEFAULT_TIMEOUTS,
  FALLBACK_REASONS,
  ROUTING_STRATEGIES,
  type Deployment,
  type Fallback,
  type ModelRoute,
  type RoutingStrategy,
} from './catalog-types.js';

/** The catalog tables as read at one moment. Credentials stay sealed here; the catalog opens them. */
export interface CatalogRows {
  models: ModelRoute[];
  deployments: Deployment[];
  credentials: Map<string, { provider: string; secretCiphertext: string }>;
}

export async function readCatalogRows(db: Kysely<Database>): Promise<CatalogRows> {
  const [modelRows, deploymentRows, credentialRows] = await Promise.all([
    db.selectFrom('models').selectAll().orderBy('id').execute(),
    db.selectFrom('deployments').selectAll().orderBy('created_at').orderBy('id').execute(),
    db.selectFrom('provider_credentials').selectAll().execute(),
  ]);
  return {
    models: modelRows.map(modelFromRow),
    deployments: deploymentRows.map(deploymentFromRow),
    credentials: new Map(
      credentialRows.map((row) => [row.id, { provider: row.provider, secretCiphertext: row.secret_ciphertext }]),
    ),
  };
}

export function modelFromRow(row: ModelsTable): ModelRoute {
  return {
    id: row.id,
    ownedBy: row.owned_by,
    strategy: (ROUTING_STRATEGIES as readonly string[]).includes(row.strategy)
      ? (row.strategy as RoutingStrategy)
      : 'priority',
    fallbacks: parseFallbacks(row.fallbacks),
    description: row.description,
    createdAt: Number(row.created_at),
    deployments: [],
    source: 'database',
    pricing: null,
  };
}

export function deploymentFromRow(row: DeploymentsTable): Deployment {
  return {
    id: row.id,
    modelId: row.model_id,
    provider: row.provider,
    upstreamModel: row.upstream_model,
    baseUrl: row.base_url,
    credentialId: row.credential_id,
    weight: Number(row.weight),
    priority: Number(row.priority),
    timeouts: parseTimeouts(row.timeouts),
    rpm: row.rpm === null ? null : Number(row.rpm),
    tpm: row.tpm === null ? null : Number(row.tpm),
    pricing: parsePricing(row.pricing),
    settings: parseStringRecord(row.settings),
    enabled: Number(row.enabled) === 1,
    source: 'database',
  };
}

/** Stored as JSON `{connectMs, firstByteMs, totalMs}`; missing or bad fields take the defaults. */
export function parseTimeouts(text: string | null): Timeouts {
  const value = safeJson(text);
  const record = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  const pick = (name: keyof Timeouts) => {
    const number = record[name];
    return typeof number === 'number' && number > 0 ? number : DEFAULT_TIMEOUTS[name];
  };
  return { connectMs: pick('connectMs'), firstByteMs: pick('firstByteMs'), totalMs: pick('totalMs') };
}

function parseFallbacks(text: string): Fallback[] {
  const value = safeJson(text);
  if (!Array.isArray(value)) return [];
  const fallbacks: Fallback[] = [];
  for (const item of value) {
    if (typeof item !== 'object' || item === null || typeof item.model !== 'string') continue;
    const on = Array.isArray(item.on)
      ? item.on.filter((reason: unknown): reason is Fallback['on'][number] =>
          (FALLBACK_REASONS as readonly unknown[]).includes(reason),
        )
      : [];
    fallbacks.push({ model: item.model, on: on.length > 0 ? on : ['any'] });
  }
  return fallbacks;
}

function parsePricing(text: string | null): ModelPrice | null {
  if (text === null) return null;
  const parsed = modelPriceSchema.safeParse(safeJson(text));
  return parsed.success ? parsed.data : null;
}

function parseStringRecord(text: string): Record<string, string> {
  const value = safeJson(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

function safeJson(text: string | null): unknown {
  if (text === null || text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
