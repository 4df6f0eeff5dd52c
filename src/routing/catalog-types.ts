import type { Timeouts } from '../providers/provider.js';
import type { ModelPrice } from '../metering/model-price.js';

export const ROUTING_STRATEGIES = ['priority', 'weighted', 'least-latency', 'least-busy', 'lowest-cost'] as const;
export type RoutingStrategy = (typeof ROUTING_STRATEGIES)[number];

export const FALLBACK_REASONS = ['rate_limited', 'context_window', 'content_filtered', 'any'] as const;
export type FallbackReason = (typeof FALLBACK_REASONS)[number];

export interface Fallback {
  model: string;
  on: FallbackReason[];
}

/** One upstream that can serve a public model id. */
export interface Deployment {
  id: string;
  modelId: string;
  provider: string;
  upstreamModel: string;
  baseUrl: string | null;
  credentialId: string | null;
  weight: number;
  priority: number;
  timeouts: Timeouts;
  rpm: number | null;
  tpm: number | null;
  /** Overrides the model's catalog price for calls served by this deployment. */
  pricing: ModelPrice | null;
  settings: Record<string, string>;
  enabled: boolean;
  source?: CatalogSource;
}

/** A public model id, as the catalog lists it, with the deployments behind it. */
export interface ModelRoute {
  id: string;
  ownedBy: string;
  strategy: RoutingStrategy;
  fallbacks: Fallback[];
  description: string | null;
  createdAt: number;
  deployments: Deployment[];
  /** Where the model's entry came from; the admin API changes only `database` entries. */
  source?: CatalogSource;
  /** Catalog price of the model when its config declares one (file `pricing`, built-in price). */
  pricing?: ModelPrice | null;
}

export type CatalogSource = 'database' | 'file' | 'builtin';

export const DEFAULT_TIMEOUTS: Timeouts = { connectMs: 10_000, firstByteMs: 120_000, totalMs: 600_000 };
