import type { OpenAI } from 'openai';
import { APIResource } from 'openai/core/resource';
import { rootUrl } from '../gateway-root.js';
import { withMetaMethod, type GwAPIPromise } from '../with-meta.js';

/** One model's price; `pricing` is null for a model without a price. */
export interface ModelPrice {
  object: 'model_price';
  model: string;
  currency: 'USD';
  priced: boolean;
  pricing: Record<string, unknown> | null;
}

export interface ModelPricing {
  object: 'list';
  data: ModelPrice[];
}

/** Model prices: /api/models/pricing (outside /v1). */
export class Pricing extends APIResource {
  /** GET /api/models/pricing. */
  list(options?: OpenAI.RequestOptions): GwAPIPromise<ModelPricing> {
    return withMetaMethod(this._client.get<ModelPricing>(rootUrl(this._client.baseURL, '/api/models/pricing'), options));
  }
}
