import type { ModelRoute } from './catalog-types.js';

/**
 * The public model ids and the deployments behind them, merged from the database (admin API) and
 * the GW_CONFIG file, plus the built-in `local` models. Reads are served from memory; `reload()`
 * re-reads after an admin change (and, with Redis, when another instance announces one).
 */
export interface ModelCatalog {
  get(modelId: string): ModelRoute | undefined;
  list(): readonly ModelRoute[];
  reload(): Promise<void>;
}
