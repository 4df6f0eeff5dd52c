import { z } from 'zod';
import type { EmbeddingRequest } from '../../protocol/embeddings.js';
import { parseUpstreamBody } from '../http/parse-upstream-body.js';
import type { OperationTranslator } from '../http/provider-adapter.js';
import { buildEmbeddingResponse, countEmbeddingTokens, embeddingInputTexts, mergeEmbeddingResponses, splitEmbeddingRequest } from '../openai/embedding-shapes.js';
import { cohereHeaders, cohereUrl } from './cohere-url.js';

const embedResponseSchema = z.looseObject({
  embeddings: z.looseObject({ float: z.array(z.array(z.number())) }),
  meta: z.looseObject({ billed_units: z.looseObject({ input_tokens: z.number().nullish() }).nullish() }).nullish(),
});

/** Embed v2 takes at most 96 texts per call; longer inputs are sent in parts. */
const COHERE_MAX_TEXTS = 96;

/**
 * Embed v2 (https://docs.cohere.com/reference/embed). OpenAI has no input type, so the deployment's
 * settings.inputType is used, `search_document` by default (what an index of documents wants).
 */
export const cohereEmbedTranslator: OperationTranslator<EmbeddingRequest> = {
  splitRequest: (request) => splitEmbeddingRequest(request, COHERE_MAX_TEXTS),
  mergeBodies: mergeEmbeddingResponses,
  buildRequest(request, context) {
    const body: Record<string, unknown> = {
      model: context.target.upstreamModel,
      texts: embeddingInputTexts(request.input),
      input_type: context.target.settings.inputType ?? 'search_document',
      embedding_types: ['float'],
    };
    if (request.dimensions) body.output_dimension = request.dimensions;
    return { method: 'POST', url: cohereUrl(context.target.baseUrl, 'embed'), headers: cohereHeaders(context.target.apiKey), body: JSON.stringify(body) };
  },
  parseResponse(body, context) {
    const parsed = parseUpstreamBody(embedResponseSchema, body, 'cohere', 'The cohere upstream answered with unreadable embeddings');
    const request = (context as { request?: EmbeddingRequest }).request;
    const billed = parsed.meta?.billed_units?.input_tokens;
    const inputTokens = billed ?? (request ? countEmbeddingTokens(embeddingInputTexts(request.input)) : 0);
    return {
      body: buildEmbeddingResponse(context.model, parsed.embeddings.float, inputTokens, request?.encoding_format),
      usage: { inputTokens },
    };
  },
};
