import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { ChangeFeed } from '../lib/change-feed.js';
import { newId } from '../lib/ids.js';
import type { Deployment } from '../routing/catalog-types.js';
import { modelPriceSchema, type ModelPrice } from './model-price.js';

/**
 * Effective model prices. Layers, later ones winning field by field:
 *   shipped defaults → config-file overrides → global admin override (pricing.org_id = '') →
 *   the serving deployment's pricing → the org's own override.
 * Field-by-field means an override may set only outputPerMillion and keep the rest. Reads are
 * served from memory; `reload()` re-reads the table (on every instance when the change feed is Redis).
 */
export interface PricingCatalog {
  priceFor(modelId: string, orgId: string, deployment?: Pick<Deployment, 'pricing'> | null): ModelPrice | undefined;
  /**
   * Effective prices of the given models (default: every model with a price anywhere) for an org,
   * as calls are charged: at the price of the deployment that serves them. `price` is the primary
   * deployment's (enabled, lowest priority number, first listed), or the model's own price without
   * deployments; `deploymentPrices` lists the distinct prices of the enabled deployments, primary
   * first, when they differ (a call is charged the one of the deployment that served it).
   */
  list(orgId: string, modelIds?: Iterable<string>, deploymentsOf?: (modelId: string) => readonly Deployment[] | undefined): PriceListEntry[];
  /** Stores an override; orgId '' is the global one. The price replaces any earlier override of that scope. */
  setOverride(modelId: string, orgId: string, price: ModelPrice): Promise<void>;
  removeOverride(modelId: string, orgId: string): Promise<boolean>;
  reload(): Promise<void>;
  close(): void;
}

export interface PriceListEntry {
  model: string;
  price: ModelPrice | undefined;
  /** Set only when the model's enabled deployments are charged differently: each distinct price, primary first. */
  deploymentPrices?: Array<ModelPrice | undefined>;
}

export interface PricingCatalogOptions {
  db: Kysely<Database>;
  defaults: Readonly<Record<string, ModelPrice>>;
  fileOverrides?: Readonly<Record<string, ModelPrice>>;
  changes?: ChangeFeed;
  now?: () => number;
  onError?: (error: unknown) => void;
}

/** The same text for equal prices whatever the order their fields were set in. */
function canonicalJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  const entries = Object.entries(value as Record<string, unknown>).filter(([, field]) => field !== undefined);
  entries.sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
  return `{${entries.map(([name, field]) => `${JSON.stringify(name)}:${canonicalJson(field)}`).join(',')}}`;
}

function merge(base: ModelPrice | undefined, over: ModelPrice | null | undefined): ModelPrice | undefined {
  if (!over) return base;
  if (!base) return over;
  const merged: ModelPrice = { ...base, ...over };
  if (base.perImage && over.perImage) merged.perImage = { ...base.perImage, ...over.perImage };
  return merged;
}

export async function createPricingCatalog(options: PricingCatalogOptions): Promise<PricingCatalog> {
  const now = options.now ?? Date.now;
  const fileOverrides = options.fileOverrides ?? {};
  /** orgId ('' = global) → modelId → override. Replaced wholesale on reload, never mutated in place by readers. */
  let overrides = new Map<string, Map<string, ModelPrice>>();

  async function reload(): Promise<void> {
    const rows = await options.db.selectFrom('pricing').select(['model_id', 'org_id', 'prices']).execute();
    const next = new Map<string, Map<string, ModelPrice>>();
    for (const row of rows) {
      const parsed = modelPriceSchema.safeParse(JSON.parse(row.prices));
      if (!parsed.success) {
        options.onError?.(new Error(`ignoring invalid price override for ${row.model_id} (org "${row.org_id}")`));
        continue;
      }
      let byModel = next.get(row.org_id);
      if (!byModel) next.set(row.org_id, (byModel = new Map()));
      byModel.set(row.model_id, parsed.data);
    }
    overrides = next;
  }

  function priceFor(modelId: string, orgId: string, deployment?: Pick<Deployment, 'pricing'> | null): ModelPrice | undefined {
    let price: ModelPrice | undefined = options.defaults[modelId];
    price = merge(price, fileOverrides[modelId]);
    price = merge(price, overrides.get('')?.get(modelId));
    price = merge(price, deployment?.pricing);
    return merge(price, overrides.get(orgId)?.get(modelId));
  }

  function listEntry(model: string, orgId: string, deployments: readonly Deployment[] | undefined): PriceListEntry {
    // Priority order: the deployment a call tries first under the default strategy.
    const serving = (deployments ?? []).filter((deployment) => deployment.enabled).sort((left, right) => left.priority - right.priority);
    if (serving.length === 0) return { model, price: priceFor(model, orgId) };
    const prices = serving.map((deployment) => priceFor(model, orgId, deployment));
    const distinct: Array<ModelPrice | undefined> = [];
    const seen = new Set<string>();
    for (const price of prices) {
      const key = price === undefined ? '' : canonicalJson(price);
      if (seen.has(key)) continue;
      seen.add(key);
      distinct.push(price);
    }
    return distinct.length > 1 ? { model, price: prices[0], deploymentPrices: distinct } : { model, price: prices[0] };
  }

  /** Reloads here before answering (the admin sees its change at once), then tells the other instances. */
  async function announce(): Promise<void> {
    await reload();
    await options.changes?.publish({ kind: 'pricing' });
  }

  const unsubscribe = options.changes?.subscribe((notice) => {
    if (notice.kind === 'pricing' || notice.kind === 'all') reload().catch((error) => options.onError?.(error));
  });

  await reload();

  return {
    priceFor,
    list(orgId, modelIds, deploymentsOf) {
      let ids: Iterable<string> | undefined = modelIds;
      if (!ids) {
        const all = new Set<string>([...Object.keys(options.defaults), ...Object.keys(fileOverrides)]);
        for (const model of overrides.get('')?.keys() ?? []) all.add(model);
        for (const model of overrides.get(orgId)?.keys() ?? []) all.add(model);
        ids = [...all].sort();
      }
      return [...ids].map((model) => listEntry(model, orgId, deploymentsOf?.(model)));
    },
    async setOverride(modelId, orgId, price) {
      const prices = JSON.stringify(modelPriceSchema.parse(price));
      await options.db
        .insertInto('pricing')
        .values({ id: newId(), model_id: modelId, org_id: orgId, prices, updated_at: now() })
        .onConflict((conflict) => conflict.columns(['model_id', 'org_id']).doUpdateSet({ prices, updated_at: now() }))
        .execute();
      await announce();
    },
    async removeOverride(modelId, orgId) {
      const result = await options.db.deleteFrom('pricing').where('model_id', '=', modelId).where('org_id', '=', orgId).executeTakeFirst();
      await announce();
      return Number(result.numDeletedRows) > 0;
    },
    reload,
    close() {
      unsubscribe?.();
    },
  };
}
