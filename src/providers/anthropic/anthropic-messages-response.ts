import { z } from 'zod';
import type { FinishReason, ToolCall } from '../../protocol/chat.js';
import type { Usage } from '../../protocol/usage.js';
import { parseUpstreamBody } from '../http/parse-upstream-body.js';
import type { TranslationContext } from '../http/provider-adapter.js';
import { buildChatCompletion } from '../openai/chat-chunks.js';

/** Anthropic stop_reason → OpenAI finish_reason (https://docs.anthropic.com/en/api/handling-stop-reasons). */
export function anthropicFinishReason(stopReason: string | null | undefined): FinishReason | null {
  switch (stopReason) {
    case null:
    case undefined:
      return null;
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, pause_turn
      return 'stop';
  }
}

export const anthropicUsageSchema = z.looseObject({
  input_tokens: z.number().nullish(),
  output_tokens: z.number().nullish(),
  cache_creation_input_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
});
export type AnthropicUsage = z.infer<typeof anthropicUsageSchema>;

/** Anthropic's input_tokens already exclude cache reads and writes, so the classes map one to one. */
export function anthropicUsage(usage: AnthropicUsage): Usage {
  const result: Usage = { inputTokens: usage.input_tokens ?? 0, outputTokens: usage.output_tokens ?? 0 };
  if (usage.cache_read_input_tokens) result.cachedInputTokens = usage.cache_read_input_tokens;
  if (usage.cache_creation_input_tokens) result.cacheWriteInputTokens = usage.cache_creation_input_tokens;
  return result;
}

const messageSchema = z.looseObject({
  content: z.array(
    z.looseObject({
      type: z.string(),
      text: z.string().nullish(),
      id: z.string().nullish(),
      name: z.string().nullish(),
      input: z.unknown().optional(),
    }),
  ),
  stop_reason: z.string().nullish(),
  usage: anthropicUsageSchema.nullish(),
});

export function parseAnthropicMessage(body: unknown, context: TranslationContext) {
  const parsed = parseUpstreamBody(messageSchema, body, 'anthropic', 'The anthropic upstream answered with an unreadable message');
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const block of parsed.content) {
    if (block.type === 'text' && block.text) texts.push(block.text);
    if (block.type === 'tool_use') {
      toolCalls.push({
        id: block.id ?? '',
        type: 'function',
        function: { name: block.name ?? '', arguments: JSON.stringify(block.input ?? {}) },
      });
    }
    // thinking / redacted_thinking blocks have no place in the OpenAI shape and are dropped.
  }
  const usage = parsed.usage ? anthropicUsage(parsed.usage) : undefined;
  const completion = buildChatCompletion(
    context,
    [{ content: texts.length > 0 ? texts.join('') : null, toolCalls, finishReason: anthropicFinishReason(parsed.stop_reason) }],
    usage,
  );
  return { body: completion, usage };
}
