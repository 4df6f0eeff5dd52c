import type { OpenAI } from 'openai';
import { APIResource } from 'openai/core/resource';
import { rootUrl } from '../gateway-root.js';
import { withMetaMethod, type GwAPIPromise } from '../with-meta.js';

export type GuardrailKind = 'pii' | 'prompt_injection' | 'secrets' | 'regex' | 'deny_list' | 'webhook';

/** A guardrail as the key sees it (webhook header values masked). */
export interface Guardrail {
  id: string;
  object: 'guardrail';
  org_id: string;
  name: string;
  kind: GuardrailKind;
  stage: 'pre' | 'post' | 'both';
  action: 'block' | 'redact';
  enabled_by_default: boolean;
  config: Record<string, unknown>;
  created_at: number;
  updated_at: number;
}

export interface GuardrailList {
  object: 'list';
  data: Guardrail[];
}

export type GuardrailInfo = Guardrail;

/** One guardrail trigger. */
export interface GuardrailLogEntry {
  id: string;
  object: 'guardrail.log';
  guardrail_id: string;
  guardrail_name: string;
  kind: GuardrailKind;
  stage: string;
  action: string;
  request_id: string;
  key_alias: string | null;
  model: string | null;
  finding_types: string[];
  reason: string | null;
  created_at: number;
}

export interface GuardrailLogs {
  object: 'list';
  data: GuardrailLogEntry[];
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
