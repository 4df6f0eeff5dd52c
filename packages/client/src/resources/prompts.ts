import type { OpenAI } from 'openai';
import { APIResource } from 'openai/core/resource';
import { rootUrl } from '../gateway-root.js';
import { withMetaMethod, type GwAPIPromise } from '../with-meta.js';

/** A prompt template. */
export interface PromptTemplate {
  id: string;
  object: 'prompt';
  org_id: string;
  name: string;
  description: string | null;
  latest_version: number;
  is_default: boolean;
  created_at: number;
  updated_at: number;
}

/** One saved version of a template. */
export interface PromptVersion {
  object: 'prompt.version';
  version: number;
  messages: Array<{ role: string; content: string; name?: string }>;
  model: string | null;
  parameters: Record<string, unknown> | null;
  created_at: number;
}

export interface PromptList {
  object: 'list';
  data: PromptTemplate[];
}

export interface PromptInfo extends PromptTemplate {
  versions: PromptVersion[];
}

export interface PromptDiff {
  object: 'prompt.diff';
  prompt_id: string;
  v1: number;
  v2: number;
  /** A unified diff between the two versions. */
  diff: string;
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
