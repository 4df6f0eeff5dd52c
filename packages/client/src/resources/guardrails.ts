import type { OpenAI } from 'openai';
import { APIResource } from 'openai/core/resource';
import { rootUrl } from '../gateway-root.js';
import { withMetaMethod, type GwAPIPromise } from '../with-meta.js';

/** The gateway's guardrail answers; fields beyond these may be present. */
export interface GuardrailList {
  data?: Array<Record<string, unknown>>;
  [field: string]: unknown;
}
export interface GuardrailInfo {
  [field: string]: unknown;
}
export interface GuardrailLogs {
  data?: Array<Record<string, unknown>>;
  [field: string]: unknown;
}

/** Guardrails visible to the key: /gw/guardrail/... (outside /v1). */
export class Guardrails extends APIResource {
  /** GET /gw/guardrail/list. */
  list(options?: OpenAI.RequestOptions): GwAPIPromise<GuardrailList> {
    return withMetaMethod(this._client.get<GuardrailList>(rootUrl(this._client.baseURL, '/gw/guardrail/list'), options));
  }

  /** GET /gw/guardrail/info?guardrail_id=. */
  info(guardrailId: string, options?: OpenAI.RequestOptions): GwAPIPromise<GuardrailInfo> {
    return withMetaMethod(
      this._client.get<GuardrailInfo>(rootUrl(this._client.baseURL, '/gw/guardrail/info'), {
        query: { guardrail_id: guardrailId },
        ...options,
      }),
    );
  }

  /** GET /gw/guardrail/logs?limit=. */
  logs(params: { limit?: number } = {}, options?: OpenAI.RequestOptions): GwAPIPromise<GuardrailLogs> {
    return withMetaMethod(
      this._client.get<GuardrailLogs>(rootUrl(this._client.baseURL, '/gw/guardrail/logs'), { query: params, ...options }),
    );
  }
}
