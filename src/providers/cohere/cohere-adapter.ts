import type { ChatRequest } from '../../protocol/chat.js';
import type { OperationTranslator, ProviderAdapter } from '../http/provider-adapter.js';
import { buildCohereChatRequest } from './cohere-chat-request.js';
import { parseCohereChatResponse } from './cohere-chat-response.js';
import { cohereEmbedTranslator } from './cohere-embed.js';
import { parseCohereError } from './cohere-error.js';
import { cohereRerankTranslator } from './cohere-rerank.js';
import { createCohereStreamTranslator } from './cohere-stream-translator.js';

/** Cohere API v2: chat, embed, rerank. target.apiKey is sent as a bearer token. */
export function createCohereAdapter(): ProviderAdapter {
  const chat: OperationTranslator<ChatRequest> = {
    buildRequest: buildCohereChatRequest,
    parseResponse: (body, context) => parseCohereChatResponse(body, context),
    createStreamTranslator: createCohereStreamTranslator,
  };
  return {
    id: 'cohere',
    streamFraming: 'sse',
    translators: { chat, embedding: cohereEmbedTranslator, rerank: cohereRerankTranslator },
    parseError: parseCohereError,
  };
}
