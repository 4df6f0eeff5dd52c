import type { OpenAI } from 'openai';
import { Embeddings } from 'openai/resources/embeddings';
import type { CreateEmbeddingResponse, EmbeddingCreateParams } from 'openai/resources/embeddings';
import type { GwCacheExtras } from '../request-extras.js';
import { withMetaMethod, type GwAPIPromise } from '../with-meta.js';

export type GwEmbeddingCreateParams = EmbeddingCreateParams & GwCacheExtras;

/** The SDK's embeddings with `gw_cache` typed and `.withMeta()` on every call. */
export class GwEmbeddings extends Embeddings {
  override create(body: GwEmbeddingCreateParams, options?: OpenAI.RequestOptions): GwAPIPromise<CreateEmbeddingResponse> {
    return withMetaMethod(super.create(body, options));
  }
}
