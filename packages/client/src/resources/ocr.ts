import type { OpenAI } from 'openai';
import { APIResource } from 'openai/core/resource';
import { withMetaMethod, type GwAPIPromise } from '../with-meta.js';

export interface OcrCreateParams {
  model: string;
  /** A URL or data URI, or `{ type: 'document_url', document_url }` / `{ type: 'image_url', image_url }`. */
  document: string | { type: string; document_url?: string; image_url?: string };
  [extra: string]: unknown;
}

export interface OcrResponse {
  pages: Array<{ index: number; markdown: string }>;
  model?: string;
  usage_info?: { pages_processed: number };
}

/** POST /v1/ocr: extracts the text of a document as markdown, page by page. */
export class Ocr extends APIResource {
  create(body: OcrCreateParams, options?: OpenAI.RequestOptions): GwAPIPromise<OcrResponse> {
    return withMetaMethod(this._client.post<OcrResponse>('/ocr', { body, ...options }));
  }
}
