import type { ChatRequest } from '../../protocol/chat.js';
import type { OperationTranslator, ProviderAdapter } from '../http/provider-adapter.js';
import { parseAnthropicError } from './anthropic-error.js';
import { buildAnthropicMessagesRequest } from './anthropic-messages-request.js';
import { parseAnthropicMessage } from './anthropic-messages-response.js';
import { createAnthropicStreamTranslator } from './anthropic-stream-translator.js';

/** Anthropic Messages API. target.apiKey is the x-api-key; settings.anthropicVersion overrides the version header. */
export function createAnthropicAdapter(): ProviderAdapter {
  const chat: OperationTranslator<ChatRequest> = {
    buildRequest: buildAnthropicMessagesRequest,
    parseResponse: (body, context) => parseAnthropicMessage(body, context),
    createStreamTranslator: createAnthropicStreamTranslator,
  };
  return { id: 'anthropic', streamFraming: 'sse', translators: { chat }, parseError: parseAnthropicError };
}
