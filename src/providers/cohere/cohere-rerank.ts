import { z } from 'zod';
import { documentText, type RerankRequest, type RerankResponse } from '../../protocol/rerank.js';
import { parseUpstreamBody } from '../http/parse-upstream-body.js';
import type { OperationTranslator } from '../http/provider-adapter.js';
import { cohereHeaders, cohereUrl } from './cohere-url.js';

const rerankResponseSchema = z.looseObject({
  id: z.string().nullish(),
  results: z.array(z.looseObject({ index: z.number(), relevance_score: z.number() })),
  meta: z.looseObject({ billed_units: z.looseObject({ search_units: z.number().nullish() }).nullish() }).nullish(),
});

/**
 * Rerank v2 (https://docs.cohere.com/reference/rerank). v2 no longer returns documents, so when
 * the client asks for them (return_documents) they are filled in from its own request.
 */
export const cohereRerankTranslator: OperationTranslator<RerankRequest> = {
  buildRequest(request, context) {
    const body: Record<string, unknown> = {
      model: context.target.upstreamModel,
      query: request.query,
      documents: request.documents.map(documentText),
    };
    if (request.top_n) body.top_n = request.top_n;
    return { method: 'POST', url: cohereUrl(context.target.baseUrl, 'rerank'), headers: cohereHeaders(context.target.apiKey), body: JSON.stringify(body) };
  },
  parseResponse(body, context) {
    const parsed = parseUpstreamBody(rerankResponseSchema, body, 'cohere', 'The cohere upstream answered with an unreadable rerank result');
    const request = (context as { request?: RerankRequest }).request;
    const searchUnits = parsed.meta?.billed_units?.search_units ?? 1;
    const results = [...parsed.results]
      .sort((left, right) => right.relevance_score - left.relevance_score)
      .map((result) => {
        const document = request?.return_documents ? request.documents[result.index] : undefined;
        return {
          index: result.index,
          relevance_score: result.relevance_score,
          ...(document !== undefined ? { document: { text: documentText(document) } } : {}),
        };
      });
    const response: RerankResponse = {
      id: parsed.id ?? context.requestId,
      results,
      meta: { billed_units: { search_units: searchUnits } },
    };
    return { body: response, usage: { searchUnits } };
  },
};
