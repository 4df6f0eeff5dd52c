import type { OpenAI } from 'openai';
import { APIResource } from 'openai/core/resource';
import { rootUrl } from '../gateway-root.js';
import { withMetaMethod, type GwAPIPromise } from '../with-meta.js';

/** The org's credit balance. Amounts are exact USD decimal strings; `balance_nanos` is integer nano-USD. */
export interface CreditBalance {
  object: 'credit_balance';
  org_id: string;
  currency: 'USD';
  balance_usd: string;
  balance_nanos: number;
  reserved_usd: string;
  credited_usd: string;
  spent_usd: string;
}

/** One metered call. */
export interface CreditHistoryEntry {
  object: 'credit_history_entry';
  /** ISO 8601. */
  created_at: string;
  request_id: string;
  key_alias: string | null;
  user: string | null;
  model: string;
  operation: string;
  units: Record<string, unknown>;
  cost_usd: string;
  cost_nanos: number;
  unpriced: boolean;
}

export interface CreditHistory {
  object: 'list';
  data: CreditHistoryEntry[];
  limit: number;
  offset: number;
  has_more: boolean;
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
