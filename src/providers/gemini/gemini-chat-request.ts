import type { ChatMessage, ChatRequest } from '../../protocol/chat.js';
import type { TranslationContext, UpstreamRequest } from '../http/provider-adapter.js';
import { contentParts, maxTokensOf, messageText, parseToolArguments, stopSequences } from '../openai/chat-content.js';
import { geminiModelUrl } from './gemini-url.js';

type GeminiPart = Record<string, unknown>;
interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  pdf: 'application/pdf',
};

function mimeTypeOfUrl(url: string): string {
  const extension = /\.([a-z0-9]+)(?:[?#].*)?$/i.exec(url)?.[1]?.toLowerCase() ?? '';
  return MIME_BY_EXTENSION[extension] ?? 'image/jpeg';
}

/** generateContent body (https://ai.google.dev/api/generate-content) from a canonical chat request. */
export function toGeminiBody(request: ChatRequest): Record<string, unknown> {
  const system: string[] = [];
  const contents: GeminiContent[] = [];
  // Gemini answers tool results by function name; OpenAI by call id, so remember the names.
  const toolNames = new Map<string, string>();
  for (const message of request.messages) {
    if (message.role === 'system' || message.role === 'developer') {
      const text = messageText(message.content);
      if (text) system.push(text);
      continue;
    }
    for (const call of message.tool_calls ?? []) toolNames.set(call.id, call.function.name);
    const translated = toGeminiContent(message, toolNames);
    if (translated.parts.length === 0) continue;
    const previous = contents[contents.length - 1];
    if (previous && previous.role === translated.role) previous.parts.push(...translated.parts);
    else contents.push(translated);
  }

  const body: Record<string, unknown> = { contents };
  if (system.length > 0) body.systemInstruction = { parts: [{ text: system.join('\n\n') }] };
  const generationConfig = toGenerationConfig(request);
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;
  if (request.tools && request.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: request.tools.map((tool) => ({
          name: tool.function.name,
          ...(tool.function.description ? { description: tool.function.description } : {}),
          ...(tool.function.parameters ? { parameters: tool.function.parameters } : {}),
        })),
      },
    ];
    const toolConfig = toToolConfig(request.tool_choice);
    if (toolConfig) body.toolConfig = toolConfig;
  }
  return body;
}

function toGenerationConfig(request: ChatRequest): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  if (typeof request.temperature === 'number') config.temperature = request.temperature;
  if (typeof request.top_p === 'number') config.topP = request.top_p;
  const maxTokens = maxTokensOf(request);
  if (maxTokens !== undefined) config.maxOutputTokens = maxTokens;
  const stop = stopSequences(request.stop);
  if (stop) config.stopSequences = stop;
  if (typeof request.n === 'number' && request.n > 1) config.candidateCount = request.n;
  if (typeof request.seed === 'number') config.seed = request.seed;
  if (typeof request.presence_penalty === 'number') config.presencePenalty = request.presence_penalty;
  if (typeof request.frequency_penalty === 'number') config.frequencyPenalty = request.frequency_penalty;
  const format = request.response_format;
  if (format?.type === 'json_object') config.responseMimeType = 'application/json';
  if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    const schema = (format as { json_schema?: { schema?: unknown } }).json_schema?.schema;
    if (schema) config.responseJsonSchema = schema;
  }
  return config;
}

function toToolConfig(choice: ChatRequest['tool_choice']): Record<string, unknown> | undefined {
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  if (typeof choice === 'object' && choice !== null) {
    return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
  }
  return undefined;
}

function toGeminiContent(message: ChatMessage, toolNames: Map<string, string>): GeminiContent {
  if (message.role === 'tool' || message.role === 'function') {
    const name = message.name ?? toolNames.get(message.tool_call_id ?? '') ?? message.tool_call_id ?? '';
    const text = messageText(message.content);
    // functionResponse.response is a JSON object; a plain-text tool result is wrapped.
    const parsed = parseToolArguments(text);
    const response = Object.keys(parsed).length > 0 ? parsed : { content: text };
    return { role: 'user', parts: [{ functionResponse: { name, response } }] };
  }
  const parts: GeminiPart[] = [];
  for (const part of contentParts(message.content)) {
    if (part.kind === 'text') parts.push({ text: part.text });
    else if (part.source.type === 'base64') parts.push({ inlineData: { mimeType: part.source.mediaType, data: part.source.data } });
    else parts.push({ fileData: { mimeType: mimeTypeOfUrl(part.source.url), fileUri: part.source.url } });
  }
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) {
      parts.push({ functionCall: { name: call.function.name, args: parseToolArguments(call.function.arguments) } });
    }
    return { role: 'model', parts };
  }
  return { role: 'user', parts };
}

export function buildGeminiChatRequest(request: ChatRequest, context: TranslationContext & { stream: boolean }): UpstreamRequest {
  const method = context.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
  return {
    method: 'POST',
    url: geminiModelUrl(context.target.baseUrl, context.target.upstreamModel, method),
    headers: { 'content-type': 'application/json', 'x-goog-api-key': context.target.apiKey ?? '' },
    body: JSON.stringify(toGeminiBody(request)),
  };
}
