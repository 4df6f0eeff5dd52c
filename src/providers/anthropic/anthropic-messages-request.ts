import type { ChatMessage, ChatRequest } from '../../protocol/chat.js';
import type { TranslationContext, UpstreamRequest } from '../http/provider-adapter.js';
import { contentParts, maxTokensOf, messageText, parseToolArguments, stopSequences } from '../openai/chat-content.js';

/** Anthropic requires max_tokens; this is used when the client set no cap. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;
export const ANTHROPIC_VERSION = '2023-06-01';
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

type AnthropicBlock = Record<string, unknown>;
interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicBlock[];
}

/** Messages API body (https://docs.anthropic.com/en/api/messages) from a canonical chat request. */
export function toAnthropicBody(request: ChatRequest, upstreamModel: string, stream: boolean): Record<string, unknown> {
  const system: string[] = [];
  const messages: AnthropicMessage[] = [];
  for (const message of request.messages) {
    if (message.role === 'system' || message.role === 'developer') {
      const text = messageText(message.content);
      if (text) system.push(text);
      continue;
    }
    const translated = toAnthropicMessage(message);
    if (translated.content.length === 0) continue;
    const previous = messages[messages.length - 1];
    // Consecutive turns of one role (several tool results, a tool result then user text) become one turn.
    if (previous && previous.role === translated.role) previous.content.push(...translated.content);
    else messages.push(translated);
  }

  const body: Record<string, unknown> = {
    model: upstreamModel,
    max_tokens: maxTokensOf(request) ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
    messages,
  };
  if (system.length > 0) body.system = system.join('\n\n');
  const stop = stopSequences(request.stop);
  if (stop) body.stop_sequences = stop;
  // Anthropic's temperature range is 0–1; OpenAI's is 0–2, so higher values are capped.
  if (typeof request.temperature === 'number') body.temperature = Math.min(1, request.temperature);
  if (typeof request.top_p === 'number') body.top_p = request.top_p;
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      name: tool.function.name,
      ...(tool.function.description ? { description: tool.function.description } : {}),
      input_schema: tool.function.parameters ?? { type: 'object', properties: {} },
    }));
    const toolChoice = toAnthropicToolChoice(request);
    if (toolChoice) body.tool_choice = toolChoice;
  }
  if (request.user) body.metadata = { user_id: request.user };
  if (stream) body.stream = true;
  return body;
}

function toAnthropicToolChoice(request: ChatRequest): Record<string, unknown> | undefined {
  const choice = request.tool_choice;
  const parallel = (request as { parallel_tool_calls?: unknown }).parallel_tool_calls;
  const disableParallel = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any', ...disableParallel };
  if (typeof choice === 'object' && choice !== null) return { type: 'tool', name: choice.function.name, ...disableParallel };
  if (choice === 'auto' || parallel === false) return { type: 'auto', ...disableParallel };
  return undefined;
}

function toAnthropicMessage(message: ChatMessage): AnthropicMessage {
  if (message.role === 'tool' || message.role === 'function') {
    return {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: message.tool_call_id ?? message.name ?? '', content: messageText(message.content) }],
    };
  }
  const content: AnthropicBlock[] = [];
  for (const part of contentParts(message.content)) {
    if (part.kind === 'text') {
      // Anthropic rejects empty text blocks.
      if (part.text !== '') content.push({ type: 'text', text: part.text });
    } else if (part.source.type === 'base64') {
      content.push({ type: 'image', source: { type: 'base64', media_type: part.source.mediaType, data: part.source.data } });
    } else {
      content.push({ type: 'image', source: { type: 'url', url: part.source.url } });
    }
  }
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) {
      content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: parseToolArguments(call.function.arguments) });
    }
    return { role: 'assistant', content };
  }
  return { role: 'user', content };
}

export function anthropicMessagesUrl(baseUrl: string | undefined): string {
  const base = (baseUrl ?? ANTHROPIC_BASE_URL).replace(/\/+$/, '').replace(/\/v1$/, '');
  return `${base}/v1/messages`;
}

export function buildAnthropicMessagesRequest(
  request: ChatRequest,
  context: TranslationContext & { stream: boolean },
): UpstreamRequest {
  return {
    method: 'POST',
    url: anthropicMessagesUrl(context.target.baseUrl),
    headers: {
      'content-type': 'application/json',
      'x-api-key': context.target.apiKey ?? '',
      'anthropic-version': context.target.settings.anthropicVersion ?? ANTHROPIC_VERSION,
      ...(context.stream ? { accept: 'text/event-stream' } : {}),
    },
    body: JSON.stringify(toAnthropicBody(request, context.target.upstreamModel, context.stream)),
  };
}
