import type { OpenAI } from 'openai';
import { APIResource } from 'openai/core/resource';
import { rootUrl } from '../gateway-root.js';
import { withMetaMethod, type GwAPIPromise } from '../with-meta.js';

/** The gateway's answer for GET /api/credits/balance; fields beyond these may be present. */
export interface CreditBalance {
  [field: string]: unknown;
}

/** The gateway's answer for GET /api/credits/history. */
export interface CreditHistory {
  data?: Array<Record<string, unknown>>;
  [field: string]: unknown;
}

export interface CreditHistoryParams {
  limit?: number;
  offset?: number;
}

/** The calling key's credits: /api/credits/... (outside /v1). */
export class Credits extends APIResource {
  /** GET /api/credits/balance. */
  balance(options?: OpenAI.RequestOptions): GwAPIPromise<CreditBalance> {
    return withMetaMethod(this._client.get<CreditBalance>(rootUrl(this._client.baseURL, '/api/credits/balance'), options));
  }

  /** GET /api/credits/history?limit&offset. */
  history(params: CreditHistoryParams = {}, options?: OpenAI.RequestOptions): GwAPIPromise<CreditHistory> {
    return withMetaMethod(
      this._client.get<CreditHistory>(rootUrl(this._client.baseURL, '/api/credits/history'), { query: params, ...options }),
    );
  }
}
