import { z } from 'zod';
import type { EmbeddingRequest } from '../../protocol/embeddings.js';
import { parseUpstreamBody } from '../http/parse-upstream-body.js';
import type { OperationTranslator } from '../http/provider-adapter.js';
import { buildEmbeddingResponse, countEmbeddingTokens, embeddingInputTexts, mergeEmbeddingResponses, splitEmbeddingRequest } from '../openai/embedding-shapes.js';
import { geminiModelName, geminiModelUrl } from './gemini-url.js';

const batchResponseSchema = z.looseObject({ embeddings: z.array(z.looseObject({ values: z.array(z.number()) })) });

/** batchEmbedContents takes at most 100 requests per call; longer inputs are sent in parts. */
const GEMINI_MAX_TEXTS = 100;

/**
 * models.batchEmbedContents (https://ai.google.dev/api/embeddings#method:-models.batchembedcontents).
 * It reports no token count, so usage is the gateway's own count of the input. The task type comes
 * from settings.taskType (e.g. RETRIEVAL_DOCUMENT) when the deployment sets one.
 */
export const geminiEmbeddingTranslator: OperationTranslator<EmbeddingRequest> = {
  splitRequest: (request) => splitEmbeddingRequest(request, GEMINI_MAX_TEXTS),
  mergeBodies: mergeEmbeddingResponses,
  buildRequest(request, context) {
    const model = geminiModelName(context.target.upstreamModel);
    const taskType = context.target.settings.taskType;
    const requests = embeddingInputTexts(request.input).map((text) => ({
      model,
      content: { parts: [{ text }] },
      ...(taskType ? { taskType } : {}),
      ...(request.dimensions ? { outputDimensionality: request.dimensions } : {}),
    }));
    return {
      method: 'POST',
      url: geminiModelUrl(context.target.baseUrl, context.target.upstreamModel, 'batchEmbedContents'),
      headers: { 'content-type': 'application/json', 'x-goog-api-key': context.target.apiKey ?? '' },
      body: JSON.stringify({ requests }),
    };
  },
  parseResponse(body, context) {
    const parsed = parseUpstreamBody(batchResponseSchema, body, 'gemini', 'The gemini upstream answered with unreadable embeddings');
    const request = embeddingRequestOf(context);
    const inputTokens = request ? countEmbeddingTokens(embeddingInputTexts(request.input)) : 0;
    const vectors = parsed.embeddings.map((embedding) => embedding.values);
    return {
      body: buildEmbeddingResponse(context.model, vectors, inputTokens, request?.encoding_format),
      usage: { inputTokens },
    };
  },
};

/** The original request, when the caller threads it through the context (see docs/providers.md). */
function embeddingRequestOf(context: object): EmbeddingRequest | undefined {
  return (context as { request?: EmbeddingRequest }).request;
}
