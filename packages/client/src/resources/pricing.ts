import type { OpenAI } from 'openai';
import { APIResource } from 'openai/core/resource';
import { rootUrl } from '../gateway-root.js';
import { withMetaMethod, type GwAPIPromise } from '../with-meta.js';

/** The gateway's answer for GET /api/models/pricing. */
export interface ModelPricing {
  data?: Array<Record<string, unknown>>;
  [field: string]: unknown;
}

/** Model prices: /api/models/pricing (outside /v1). */
export class Pricing extends APIResource {
  /** GET /api/models/pricing. */
  list(options?: OpenAI.RequestOptions): GwAPIPromise<ModelPricing> {
    return withMetaMethod(this._client.get<ModelPricing>(rootUrl(this._client.baseURL, '/api/models/pricing'), options));
  }
}
