import type { OpenAI } from 'openai';
import { APIResource } from 'openai/core/resource';
import { withMetaMethod, type GwAPIPromise } from '../with-meta.js';

export interface RerankCreateParams {
  model: string;
  query: string;
  /** Strings, or objects with a text field. */
  documents: Array<string | { text: string; [key: string]: unknown }>;
  top_n?: number | null;
  return_documents?: boolean | null;
}

export interface RerankResponse {
  id: string;
  results: Array<{ index: number; relevance_score: number; document?: { text: string } }>;
  meta?: { billed_units?: { search_units?: number } };
}

/** POST /v1/rerank: orders documents by relevance to a query. */
export class Rerank extends APIResource {
  create(body: RerankCreateParams, options?: OpenAI.RequestOptions): GwAPIPromise<RerankResponse> {
    return withMetaMethod(this._client.post<RerankResponse>('/rerank', { body, ...options }));
  }
}
