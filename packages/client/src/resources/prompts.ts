import type { OpenAI } from 'openai';
import { APIResource } from 'openai/core/resource';
import { rootUrl } from '../gateway-root.js';
import { withMetaMethod, type GwAPIPromise } from '../with-meta.js';

/** The gateway's prompt-template answers; fields beyond these may be present. */
export interface PromptList {
  data?: Array<Record<string, unknown>>;
  [field: string]: unknown;
}
export interface PromptInfo {
  [field: string]: unknown;
}
export interface PromptDiff {
  diff?: string;
  [field: string]: unknown;
}

export interface PromptDiffParams {
  prompt_id: string;
  v1: number;
  v2: number;
}

/** Prompt templates: /gw/prompt/... (outside /v1). */
export class Prompts extends APIResource {
  /** GET /gw/prompt/list. */
  list(options?: OpenAI.RequestOptions): GwAPIPromise<PromptList> {
    return withMetaMethod(this._client.get<PromptList>(rootUrl(this._client.baseURL, '/gw/prompt/list'), options));
  }

  /** GET /gw/prompt/info?prompt_id=. */
  info(promptId: string, options?: OpenAI.RequestOptions): GwAPIPromise<PromptInfo> {
    return withMetaMethod(
      this._client.get<PromptInfo>(rootUrl(this._client.baseURL, '/gw/prompt/info'), {
        query: { prompt_id: promptId },
        ...options,
      }),
    );
  }

  /** GET /gw/prompt/version/diff?prompt_id=&v1=&v2=. */
  diff(params: PromptDiffParams, options?: OpenAI.RequestOptions): GwAPIPromise<PromptDiff> {
    return withMetaMethod(
      this._client.get<PromptDiff>(rootUrl(this._client.baseURL, '/gw/prompt/version/diff'), { query: params, ...options }),
    );
  }
}
