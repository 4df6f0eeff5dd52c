import { documentText, type RerankRequest, type RerankResponse } from '../../protocol/rerank.js';
import type { Usage } from '../../protocol/usage.js';
import type { Outcome } from '../../pipeline/stage.js';
import type { Invocation } from '../provider.js';
import { bm25Scores } from './bm25.js';
import { applyMarkers } from './local-markers.js';

const DOCUMENTS_PER_SEARCH_UNIT = 100;

/**
 * Lexical rerank: BM25 scores squashed into [0, 1) by s / (s + 1), which keeps the order and gives
 * an absolute-looking relevance (no match → 0). Ties keep document order.
 */
export async function runLocalRerank(invocation: Invocation): Promise<Outcome> {
  const { call, signal } = invocation;
  const request = call.request as unknown as RerankRequest;
  await applyMarkers(request.query, signal);
  const texts = request.documents.map(documentText);
  const scores = bm25Scores(request.query, texts);
  const ranked = scores
    .map((score, index) => ({ index, relevance_score: Number((score / (score + 1)).toFixed(6)) }))
    .sort((left, right) => right.relevance_score - left.relevance_score || left.index - right.index)
    .slice(0, request.top_n ?? texts.length)
    .map((result) => (request.return_documents ? { ...result, document: { text: texts[result.index] } } : result));
  const searchUnits = Math.ceil(texts.length / DOCUMENTS_PER_SEARCH_UNIT);
  const body: RerankResponse = {
    id: `rerank-${call.requestId}`,
    results: ranked,
    meta: { billed_units: { search_units: searchUnits } },
  };
  const usage: Usage = { searchUnits };
  return { kind: 'json', body, usage };
}
