import { z } from 'zod';
import type { FinishReason, ToolCall } from '../../protocol/chat.js';
import type { Usage } from '../../protocol/usage.js';
import { parseUpstreamBody } from '../http/parse-upstream-body.js';
import type { TranslationContext } from '../http/provider-adapter.js';
import { buildChatCompletion } from '../openai/chat-chunks.js';

/** Converse stopReason → OpenAI finish_reason. */
export function bedrockFinishReason(stopReason: string | null | undefined): FinishReason | null {
  switch (stopReason) {
    case null:
    case undefined:
      return null;
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    default:
      return 'stop';
  }
}

export const bedrockUsageSchema = z.looseObject({
  inputTokens: z.number().nullish(),
  outputTokens: z.number().nullish(),
  cacheReadInputTokens: z.number().nullish(),
  cacheWriteInputTokens: z.number().nullish(),
});

/** Converse inputTokens exclude cache reads and writes, which it reports apart. */
export function bedrockUsage(usage: z.infer<typeof bedrockUsageSchema>): Usage {
  const result: Usage = { inputTokens: usage.inputTokens ?? 0, outputTokens: usage.outputTokens ?? 0 };
  if (usage.cacheReadInputTokens) result.cachedInputTokens = usage.cacheReadInputTokens;
  if (usage.cacheWriteInputTokens) result.cacheWriteInputTokens = usage.cacheWriteInputTokens;
  return result;
}

const converseResponseSchema = z.looseObject({
  output: z.looseObject({
    message: z.looseObject({
      content: z.array(
        z.looseObject({
          text: z.string().nullish(),
          toolUse: z.looseObject({ toolUseId: z.string(), name: z.string(), input: z.unknown().optional() }).nullish(),
        }),
      ),
    }),
  }),
  stopReason: z.string().nullish(),
  usage: bedrockUsageSchema.nullish(),
});

export function parseConverseResponse(body: unknown, context: TranslationContext) {
  const parsed = parseUpstreamBody(converseResponseSchema, body, 'bedrock', 'The bedrock upstream answered with an unreadable Converse response');
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const block of parsed.output.message.content) {
    if (block.text) texts.push(block.text);
    if (block.toolUse) {
      toolCalls.push({
        id: block.toolUse.toolUseId,
        type: 'function',
        function: { name: block.toolUse.name, arguments: JSON.stringify(block.toolUse.input ?? {}) },
      });
    }
    // reasoningContent, citations and other block kinds have no OpenAI counterpart and are dropped.
  }
  const usage = parsed.usage ? bedrockUsage(parsed.usage) : undefined;
  const completion = buildChatCompletion(
    context,
    [{ content: texts.length > 0 ? texts.join('') : null, toolCalls, finishReason: bedrockFinishReason(parsed.stopReason) }],
    usage,
  );
  return { body: completion, usage };
}
