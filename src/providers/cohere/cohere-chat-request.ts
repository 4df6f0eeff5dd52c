import type { ChatMessage, ChatRequest } from '../../protocol/chat.js';
import type { TranslationContext, UpstreamRequest } from '../http/provider-adapter.js';
import { contentParts, maxTokensOf, messageText, stopSequences } from '../openai/chat-content.js';
import { cohereHeaders, cohereUrl } from './cohere-url.js';

/** Chat v2 body (https://docs.cohere.com/reference/chat) from a canonical chat request. */
export function toCohereChatBody(request: ChatRequest, upstreamModel: string, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: upstreamModel,
    messages: request.messages.map(toCohereMessage),
    stream,
  };
  const maxTokens = maxTokensOf(request);
  if (maxTokens !== undefined) body.max_tokens = maxTokens;
  if (typeof request.temperature === 'number') body.temperature = request.temperature;
  // Cohere calls nucleus sampling `p` and caps it at 0.99.
  if (typeof request.top_p === 'number') body.p = Math.min(0.99, request.top_p);
  const stop = stopSequences(request.stop);
  if (stop) body.stop_sequences = stop;
  if (typeof request.seed === 'number') body.seed = request.seed;
  if (typeof request.frequency_penalty === 'number') body.frequency_penalty = Math.max(0, request.frequency_penalty);
  if (typeof request.presence_penalty === 'number') body.presence_penalty = Math.max(0, request.presence_penalty);
  const format = request.response_format;
  if (format?.type === 'json_object') body.response_format = { type: 'json_object' };
  if (format?.type === 'json_schema') {
    const schema = (format as { json_schema?: { schema?: unknown } }).json_schema?.schema;
    body.response_format = schema ? { type: 'json_object', json_schema: schema } : { type: 'json_object' };
  }
  if (request.tools && request.tools.length > 0) {
    const choice = request.tool_choice;
    // Cohere cannot name the tool to call; offering only that tool and requiring a call is equivalent.
    const named = typeof choice === 'object' && choice !== null ? choice.function.name : undefined;
    const tools = named ? request.tools.filter((tool) => tool.function.name === named) : request.tools;
    body.tools = tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.function.name,
        ...(tool.function.description ? { description: tool.function.description } : {}),
        parameters: tool.function.parameters ?? { type: 'object', properties: {} },
      },
    }));
    if (choice === 'required' || named) body.tool_choice = 'REQUIRED';
    if (choice === 'none') body.tool_choice = 'NONE';
  }
  return body;
}

function toCohereMessage(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: messageText(message.content) };
    case 'tool':
    case 'function':
      return { role: 'tool', tool_call_id: message.tool_call_id ?? message.name ?? '', content: messageText(message.content) };
    case 'assistant': {
      const result: Record<string, unknown> = { role: 'assistant' };
      const text = messageText(message.content);
      if (text) result.content = text;
      if (message.tool_calls && message.tool_calls.length > 0) {
        result.tool_calls = message.tool_calls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.function.name, arguments: call.function.arguments },
        }));
      }
      return result;
    }
    default: {
      const parts = contentParts(message.content);
      if (parts.every((part) => part.kind === 'text')) return { role: 'user', content: messageText(message.content) };
      return {
        role: 'user',
        content: parts.map((part) =>
          part.kind === 'text'
            ? { type: 'text', text: part.text }
            : {
                type: 'image_url',
                image_url: {
                  url: part.source.type === 'url' ? part.source.url : `data:${part.source.mediaType};base64,${part.source.data}`,
                },
              },
        ),
      };
    }
  }
}

export function buildCohereChatRequest(request: ChatRequest, context: TranslationContext & { stream: boolean }): UpstreamRequest {
  return {
    method: 'POST',
    url: cohereUrl(context.target.baseUrl, 'chat'),
    headers: { ...cohereHeaders(context.target.apiKey), ...(context.stream ? { accept: 'text/event-stream' } : {}) },
    body: JSON.stringify(toCohereChatBody(request, context.target.upstreamModel, context.stream)),
  };
}
