import type { ChatMessage, ChatRequest } from '../../protocol/chat.js';
import { contentParts, maxTokensOf, messageText, parseToolArguments, stopSequences } from '../openai/chat-content.js';

type Block = Record<string, unknown>;
interface ConverseMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

const IMAGE_FORMATS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };

/**
 * Converse body (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html).
 * The model id travels in the URL, not the body.
 */
export function toConverseBody(request: ChatRequest): Record<string, unknown> {
  const system: Block[] = [];
  const messages: ConverseMessage[] = [];
  for (const message of request.messages) {
    if (message.role === 'system' || message.role === 'developer') {
      const text = messageText(message.content);
      if (text) system.push({ text });
      continue;
    }
    const translated = toConverseMessage(message);
    if (translated.content.length === 0) continue;
    const previous = messages[messages.length - 1];
    // Converse requires alternating roles; several tool results become one user turn.
    if (previous && previous.role === translated.role) previous.content.push(...translated.content);
    else messages.push(translated);
  }

  const body: Record<string, unknown> = { messages };
  if (system.length > 0) body.system = system;
  const inferenceConfig: Record<string, unknown> = {};
  const maxTokens = maxTokensOf(request);
  if (maxTokens !== undefined) inferenceConfig.maxTokens = maxTokens;
  if (typeof request.temperature === 'number') inferenceConfig.temperature = request.temperature;
  if (typeof request.top_p === 'number') inferenceConfig.topP = request.top_p;
  const stop = stopSequences(request.stop);
  if (stop) inferenceConfig.stopSequences = stop;
  if (Object.keys(inferenceConfig).length > 0) body.inferenceConfig = inferenceConfig;
  if (request.tools && request.tools.length > 0) {
    const toolConfig: Record<string, unknown> = {
      tools: request.tools.map((tool) => ({
        toolSpec: {
          name: tool.function.name,
          ...(tool.function.description ? { description: tool.function.description } : {}),
          inputSchema: { json: tool.function.parameters ?? { type: 'object', properties: {} } },
        },
      })),
    };
    // Converse has no "none": the tools stay declared (a conversation holding toolUse blocks needs them) and the model chooses.
    const choice = request.tool_choice;
    if (choice === 'auto') toolConfig.toolChoice = { auto: {} };
    if (choice === 'required') toolConfig.toolChoice = { any: {} };
    if (typeof choice === 'object' && choice !== null) toolConfig.toolChoice = { tool: { name: choice.function.name } };
    body.toolConfig = toolConfig;
  }
  return body;
}

function toConverseMessage(message: ChatMessage): ConverseMessage {
  if (message.role === 'tool' || message.role === 'function') {
    return {
      role: 'user',
      content: [{ toolResult: { toolUseId: message.tool_call_id ?? message.name ?? '', content: [{ text: messageText(message.content) }] } }],
    };
  }
  const content: Block[] = [];
  for (const part of contentParts(message.content)) {
    if (part.kind === 'text') {
      if (part.text !== '') content.push({ text: part.text });
    } else if (part.source.type === 'base64') {
      const format = IMAGE_FORMATS[part.source.mediaType.toLowerCase()];
      if (format) content.push({ image: { format, source: { bytes: part.source.data } } });
    }
    // Image URLs cannot be expressed: Converse takes bytes or an S3 location only.
  }
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) {
      content.push({ toolUse: { toolUseId: call.id, name: call.function.name, input: parseToolArguments(call.function.arguments) } });
    }
    return { role: 'assistant', content };
  }
  return { role: 'user', content };
}
