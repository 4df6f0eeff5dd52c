import type { ChatRequest } from '../../protocol/chat.js';
import type { OperationTranslator, ProviderAdapter } from '../http/provider-adapter.js';
import { buildGeminiChatRequest } from './gemini-chat-request.js';
import { parseGeminiResponse } from './gemini-chat-response.js';
import { geminiEmbeddingTranslator } from './gemini-embedding.js';
import { parseGeminiError } from './gemini-error.js';
import { createGeminiStreamTranslator } from './gemini-stream-translator.js';

/** Google Gemini API (generativelanguage.googleapis.com). target.apiKey is sent as x-goog-api-key. */
export function createGeminiAdapter(): ProviderAdapter {
  const chat: OperationTranslator<ChatRequest> = {
    buildRequest: buildGeminiChatRequest,
    parseResponse: (body, context) => parseGeminiResponse(body, context),
    createStreamTranslator: createGeminiStreamTranslator,
  };
  return { id: 'gemini', streamFraming: 'sse', translators: { chat, embedding: geminiEmbeddingTranslator }, parseError: parseGeminiError };
}
