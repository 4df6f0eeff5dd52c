import { z } from 'zod';
import { gwRequestExtras } from './gw-extras.js';

/**
 * The chat-completion wire format gw exposes (the OpenAI convention, SPEC "Chat completion request").
 * Bounds the spec states are enforced; fields real clients send that the spec does not list
 * (max_completion_tokens, stream_options, parallel_tool_calls, logprobs, …) are accepted and kept,
 * so that OpenAI-compatible upstreams receive them unchanged (loose objects keep unknown keys).
 */
export const contentPartSchema = z.looseObject({ type: z.string().min(1) }).check((context) => {
  // The part types whose payload is text: anything else there would be sent (and counted) as nothing.
  // `continue` lets the content union report this issue and its path rather than a bare "Invalid input".
  const part = context.value;
  const field = part.type === 'text' ? 'text' : part.type === 'refusal' ? 'refusal' : undefined;
  if (field !== undefined && typeof part[field] !== 'string') {
    context.issues.push({ code: 'invalid_type', expected: 'string', input: part[field], path: [field], message: 'Invalid input: expected string', continue: true });
  }
});

/**
 * One message. Content follows OpenAI's contract (the check below): every message says something
 * (a string, or a non-empty array of parts), except an assistant turn that calls tools (or a
 * function, or refuses), whose content may be null or left out; a function result may be null.
 */
export const messageSchema = z
  .looseObject({
    role: z.enum(['system', 'user', 'assistant', 'tool', 'developer', 'function']),
    // null is what SDKs send for an assistant turn that only carries tool_calls (checked below).
    content: z.union([z.string(), z.array(contentPartSchema), z.null()]).optional(),
    name: z.string().optional(),
    tool_calls: z
      .array(
        z.looseObject({
          id: z.string(),
          type: z.literal('function').optional(),
          function: z.looseObject({ name: z.string(), arguments: z.string() }),
        }),
      )
      .optional(),
    tool_call_id: z.string().optional(),
  })
  .check((context) => {
    const { role, content } = context.value;
    if (typeof content === 'string') return;
    const empty = content === undefined || content === null || content.length === 0;
    if (!empty || (role === 'assistant' && saysSomethingElse(context.value)) || (role === 'function' && content === null)) return;
    if (Array.isArray(content)) {
      context.issues.push({ code: 'too_small', origin: 'array', minimum: 1, input: content, path: ['content'], message: 'Too small: expected array to have >=1 items (a message needs content)' });
      return;
    }
    const why = role === 'assistant' ? ' (an assistant message needs content unless it has tool_calls)' : '';
    context.issues.push({ code: 'invalid_type', expected: 'string', input: content, path: ['content'], message: `Invalid input: expected a string or an array of content parts${why}` });
  });

function saysSomethingElse(message: Record<string, unknown>): boolean {
  return (
    (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) ||
    (typeof message.function_call === 'object' && message.function_call !== null) ||
    typeof message.refusal === 'string'
  );
}

export const toolSchema = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
});

export const chatRequestSchema = z
  .looseObject({
    model: z.string().min(1),
    // May be empty only when a prompt template supplies the messages (checked below).
    messages: z.array(messageSchema),
    temperature: z.number().min(0).max(2).nullish(),
    max_tokens: z.number().int().min(1).nullish(),
    max_completion_tokens: z.number().int().min(1).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    n: z.number().int().min(1).max(128).nullish(),
    stream: z.boolean().nullish(),
    stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
    stop: z.union([z.string(), z.array(z.string()).max(4), z.null()]).optional(),
    presence_penalty: z.number().min(-2).max(2).nullish(),
    frequency_penalty: z.number().min(-2).max(2).nullish(),
    response_format: z
      .looseObject({ type: z.enum(['text', 'json_object', 'json_schema']) })
      .nullish(),
    seed: z.number().int().nullish(),
    tools: z.array(toolSchema).nullish(),
    tool_choice: z
      .union([
        z.enum(['auto', 'none', 'required']),
        z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string() }) }),
      ])
      .nullish(),
    user: z.string().max(200).nullish(),
  })
  .extend(gwRequestExtras.shape)
  .refine((request) => request.messages.length > 0 || Boolean(request.gw_prompt_template_id), {
    message: 'Too small: expected array to have >=1 items (or name a prompt template in gw_prompt_template_id)',
    path: ['messages'],
  });

export type ChatRequest = z.infer<typeof chatRequestSchema>;
export type ChatMessage = z.infer<typeof messageSchema>;
export type ChatTool = z.infer<typeof toolSchema>;

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: { role: 'assistant'; content: string | null; tool_calls?: ToolCall[]; refusal?: string | null };
    finish_reason: FinishReason | null;
    logprobs?: unknown;
  }>;
  usage?: UsageBody;
  system_fingerprint?: string | null;
  [extra: string]: unknown;
}

/** OpenAI's usage object, with the detail objects upstreams fill for cached and reasoning tokens. */
export interface UsageBody {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; audio_tokens?: number; cache_creation_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number; audio_tokens?: number };
  [extra: string]: unknown;
}

export interface ChunkToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: { role?: 'assistant'; content?: string | null; tool_calls?: ChunkToolCallDelta[]; refusal?: string | null };
    finish_reason: FinishReason | null;
    logprobs?: unknown;
  }>;
  usage?: UsageBody | null;
  [extra: string]: unknown;
}
