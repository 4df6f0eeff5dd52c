import { createHash } from 'node:crypto';
import { invalidRequest } from '../../errors/gateway-error.js';
import type { ChatMessage, ChatRequest, ChatTool, FinishReason, ToolCall } from '../../protocol/chat.js';
import { messageText, truncateText } from './message-text.js';
import { stripMarkers } from './local-markers.js';
import { countTokens, cutAtStop, cutToTokens } from './token-pieces.js';

/** One generated choice: either text (split into token pieces) or tool calls. */
export interface LocalChoice {
  content: string | null;
  pieces: string[];
  toolCalls?: ToolCall[];
  finishReason: FinishReason;
  completionTokens: number;
}

export interface ChatAnswer {
  choices: LocalChoice[];
  promptTokens: number;
  completionTokens: number;
}

const ECHO_CHARACTERS = 200;

/**
 * The deterministic answer of the local chat models: an echo of the last user message (or tool
 * result), honouring n, stop, max_tokens, JSON mode and tools the way an upstream model would.
 */
export function composeChatAnswer(request: ChatRequest, model: string, requestId: string): ChatAnswer {
  const messages = request.messages;
  const last = messages[messages.length - 1];
  const count = request.n ?? 1;
  const maxTokens = request.max_completion_tokens ?? request.max_tokens ?? undefined;
  const tool = chooseTool(request, last);
  const choices: LocalChoice[] = [];
  for (let index = 0; index < count; index++) {
    if (tool) {
      choices.push(toolChoice(tool, last, requestId, index));
      continue;
    }
    const full = answerText(last, model, index, request.response_format?.type);
    const stopped = cutAtStop(full, request.stop);
    const cut = cutToTokens(stopped.text, maxTokens);
    choices.push({
      content: cut.text,
      pieces: cut.pieces,
      finishReason: cut.truncated ? 'length' : 'stop',
      completionTokens: cut.tokenCount,
    });
  }
  const completionTokens = choices.reduce((sum, choice) => sum + choice.completionTokens, 0);
  return { choices, promptTokens: countPromptTokens(request), completionTokens };
}

function answerText(last: ChatMessage, model: string, index: number, format: string | undefined): string {
  const echoed = truncateText(stripMarkers(messageText(last)), ECHO_CHARACTERS);
  const variant = index === 0 ? '' : ` (choice ${index + 1})`;
  const reply =
    last.role === 'tool'
      ? `Local reply to tool result: ${echoed}`
      : echoed.length > 0
        ? `Local reply to: ${echoed}`
        : 'Local reply to an empty message';
  if (format === 'json_object' || format === 'json_schema') {
    return JSON.stringify({ reply: `${reply}${variant}`, model, deterministic: true });
  }
  return `${reply}${variant}. This is a deterministic answer from the built-in local model.`;
}

function chooseTool(request: ChatRequest, last: ChatMessage): ChatTool | undefined {
  const tools = request.tools ?? [];
  const choice = request.tool_choice ?? 'auto';
  if (tools.length === 0 || choice === 'none') return undefined;
  if (typeof choice === 'object') {
    const named = tools.find((tool) => tool.function.name === choice.function.name);
    if (!named) throw invalidRequest(`tool_choice names "${choice.function.name}", which is not in tools.`, 'tool_choice');
    return last.role === 'user' ? named : undefined;
  }
  return last.role === 'user' ? tools[0] : undefined;
}

function toolChoice(tool: ChatTool, last: ChatMessage, requestId: string, index: number): LocalChoice {
  const argumentsText = JSON.stringify(argumentsFor(tool.function.parameters, stripMarkers(messageText(last))));
  const id = `call_${createHash('sha256').update(`${requestId}:${index}`).digest('hex').slice(0, 24)}`;
  return {
    content: null,
    pieces: [],
    toolCalls: [{ id, type: 'function', function: { name: tool.function.name, arguments: argumentsText } }],
    finishReason: 'tool_calls',
    completionTokens: countTokens(tool.function.name) + countTokens(argumentsText),
  };
}

/** Fills the schema's required properties (all of them when none are required) with values derived from the message. */
function argumentsFor(parameters: Record<string, unknown> | undefined, userText: string): Record<string, unknown> {
  const properties = isRecord(parameters?.['properties']) ? parameters['properties'] : {};
  const required = Array.isArray(parameters?.['required']) ? (parameters['required'] as unknown[]) : Object.keys(properties);
  const values: Record<string, unknown> = {};
  for (const name of required) {
    if (typeof name !== 'string') continue;
    values[name] = valueFor(properties[name], userText);
  }
  return values;
}

function valueFor(schema: unknown, userText: string): unknown {
  if (!isRecord(schema)) return truncateText(userText, 60);
  if (Array.isArray(schema['enum']) && schema['enum'].length > 0) return schema['enum'][0];
  switch (schema['type']) {
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return truncateText(userText, 60);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** OpenAI's documented approximation: 3 tokens of framing per message, 3 to prime the answer. */
function countPromptTokens(request: ChatRequest): number {
  let total = 3;
  for (const message of request.messages) {
    total += 3 + countTokens(message.role) + countTokens(messageText(message));
    if (message.name) total += 1 + countTokens(message.name);
    for (const call of message.tool_calls ?? []) total += countTokens(call.function.name) + countTokens(call.function.arguments);
  }
  if (request.tools && request.tools.length > 0) total += countTokens(JSON.stringify(request.tools));
  return total;
}
