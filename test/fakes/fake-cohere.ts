import { lastUserText, splitForWire, sseEvent, startFakeUpstream, type FakeUpstream } from './fake-upstream.js';

/**
 * Cohere v2 fake: /v2/chat (JSON or SSE), /v2/embed (float vectors [length, 1, 0]),
 * /v2/rerank (score = share of query words found in the document).
 */
export function startFakeCohere(): Promise<FakeUpstream> {
  return startFakeUpstream((request) => {
    if (!String(request.headers.authorization ?? '').startsWith('Bearer ') || request.headers.authorization === 'Bearer ') {
      return { status: 401, body: { id: 'e1', message: 'no api key supplied' } };
    }
    const body = (request.json ?? {}) as Record<string, unknown>;
    if (request.url === '/v2/embed') {
      const texts = (body.texts as string[] | undefined) ?? [];
      // As the real API: at most 96 texts per call.
      if (texts.length > 96) return { status: 400, body: { id: 'e2', message: `invalid request: total number of texts must be at most 96 - received ${texts.length}` } };
      return {
        body: {
          id: 'embed-fake',
          embeddings: { float: texts.map((text) => [text.length, 1, 0]) },
          texts,
          meta: { api_version: { version: '2' }, billed_units: { input_tokens: texts.length * 2 } },
          response_type: 'embeddings_by_type',
        },
      };
    }
    if (request.url === '/v2/rerank') {
      const words = String(body.query ?? '').toLowerCase().split(/\W+/).filter(Boolean);
      const documents = (body.documents as string[] | undefined) ?? [];
      const results = documents
        .map((document, index) => ({
          index,
          relevance_score: words.length === 0 ? 0 : words.filter((word) => document.toLowerCase().includes(word)).length / words.length,
        }))
        .sort((left, right) => right.relevance_score - left.relevance_score || left.index - right.index)
        .slice(0, (body.top_n as number | undefined) ?? documents.length);
      return { body: { id: 'rerank-fake', results, meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } } } };
    }
    if (request.url === '/v2/chat') {
      const text = `Echo: ${lastUserText(body.messages)}`;
      const usage = { billed_units: { input_tokens: 9, output_tokens: 4 }, tokens: { input_tokens: 90, output_tokens: 4 } };
      if (!body.stream) {
        return { body: { id: 'chat-fake', finish_reason: 'COMPLETE', message: { role: 'assistant', content: [{ type: 'text', text }] }, usage } };
      }
      const events = [
        sseEvent({ id: 'chat-fake', type: 'message-start', delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } }, 'message-start'),
        sseEvent({ type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } }, 'content-start'),
        ...text.split(/(?<= )/).map((piece) => sseEvent({ type: 'content-delta', index: 0, delta: { message: { content: { text: piece } } } }, 'content-delta')),
        sseEvent({ type: 'content-end', index: 0 }, 'content-end'),
        sseEvent({ type: 'message-end', delta: { finish_reason: 'COMPLETE', usage } }, 'message-end'),
        'data: [DONE]\n\n',
      ];
      return { headers: { 'content-type': 'text/event-stream' }, chunks: splitForWire(events.join('')) };
    }
    return { status: 404, body: { message: 'not found' } };
  });
}
