import { lastUserText, splitForWire, startFakeUpstream, type FakeUpstream } from './fake-upstream.js';

interface GenerateBody {
  contents?: unknown;
  tools?: Array<{ functionDeclarations?: Array<{ name: string }> }>;
  toolConfig?: { functionCallingConfig?: { mode?: string } };
  requests?: Array<{ content?: { parts?: Array<{ text?: string }> }; outputDimensionality?: number }>;
}

/**
 * Gemini API fake: generateContent, streamGenerateContent?alt=sse, batchEmbedContents. Answers
 * `Echo: <last user text>`, or a functionCall of the first declared function when tools are
 * offered and the last turn holds no functionResponse. Embeddings are [length, 1, 0, …].
 */
export function startFakeGemini(): Promise<FakeUpstream> {
  return startFakeUpstream((request) => {
    const match = /^\/v1beta\/models\/([^:]+):(\w+)(\?.*)?$/.exec(request.url);
    if (!match) return { status: 404, body: { error: { code: 404, message: 'Not found', status: 'NOT_FOUND' } } };
    if (!request.headers['x-goog-api-key']) {
      return { status: 403, body: { error: { code: 403, message: 'Method doesn\'t allow unregistered callers.', status: 'PERMISSION_DENIED' } } };
    }
    const [, , method] = match;
    const body = (request.json ?? {}) as GenerateBody;
    if (method === 'batchEmbedContents') {
      // As the real API: at most 100 requests per batch.
      if ((body.requests ?? []).length > 100) {
        return { status: 400, body: { error: { code: 400, message: '* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch', status: 'INVALID_ARGUMENT' } } };
      }
      return {
        body: {
          embeddings: (body.requests ?? []).map((item) => {
            const text = item.content?.parts?.map((part) => part.text ?? '').join('') ?? '';
            const vector = Array.from({ length: item.outputDimensionality ?? 4 }, (_, index) => (index === 0 ? text.length : index === 1 ? 1 : 0));
            return { values: vector };
          }),
        },
      };
    }
    const contents = Array.isArray(body.contents) ? (body.contents as Array<{ parts?: Array<Record<string, unknown>> }>) : [];
    const lastParts = contents.at(-1)?.parts ?? [];
    const declared = body.tools?.[0]?.functionDeclarations?.[0]?.name;
    const callTool = declared && body.toolConfig?.functionCallingConfig?.mode !== 'NONE' && !lastParts.some((part) => 'functionResponse' in part);
    const text = `Echo: ${lastUserText(body.contents)}`;
    const usageMetadata = { promptTokenCount: 11, candidatesTokenCount: 5, totalTokenCount: 16 };
    const parts = callTool ? [{ functionCall: { name: declared, args: { city: 'Paris' } } }] : [{ text }];
    if (method === 'generateContent') {
      return { body: { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata, modelVersion: 'fake' } };
    }
    if (method === 'streamGenerateContent') {
      const pieces = callTool ? [parts] : text.split(/(?<= )/).map((piece) => [{ text: piece }]);
      const events = pieces.map((pieceParts, index) => {
        const last = index === pieces.length - 1;
        const candidate = { content: { role: 'model', parts: pieceParts }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) };
        return `data: ${JSON.stringify({ candidates: [candidate], usageMetadata: { ...usageMetadata, candidatesTokenCount: index + 1 } })}\r\n\r\n`;
      });
      return { headers: { 'content-type': 'text/event-stream' }, chunks: splitForWire(events.join('')) };
    }
    return { status: 400, body: { error: { code: 400, message: `Unknown method ${method}`, status: 'INVALID_ARGUMENT' } } };
  });
}
