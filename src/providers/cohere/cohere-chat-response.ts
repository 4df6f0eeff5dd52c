import { z } from 'zod';
import type { FinishReason, ToolCall } from '../../protocol/chat.js';
import type { Usage } from '../../protocol/usage.js';
import { parseUpstreamBody } from '../http/parse-upstream-body.js';
import type { TranslationContext } from '../http/provider-adapter.js';
import { buildChatCompletion } from '../openai/chat-chunks.js';

/** Cohere finish_reason (https://docs.cohere.com/reference/chat#response.body.finish_reason) → OpenAI. */
export function cohereFinishReason(reason: string | null | undefined): FinishReason | null {
  switch (reason) {
    case null:
    case undefined:
      return null;
    case 'MAX_TOKENS':
      return 'length';
    case 'TOOL_CALL':
      return 'tool_calls';
    default:
      // COMPLETE, STOP_SEQUENCE, ERROR, TIMEOUT
      return 'stop';
  }
}

const tokenCountsSchema = z.looseObject({ input_tokens: z.number().nullish(), output_tokens: z.number().nullish() }).nullish();
export const cohereUsageSchema = z.looseObject({ billed_units: tokenCountsSchema, tokens: tokenCountsSchema });

/** Billed units are what Cohere charges for; the raw token counts are the fallback. */
export function cohereUsage(usage: z.infer<typeof cohereUsageSchema> | null | undefined): Usage | undefined {
  const counts = usage?.billed_units ?? usage?.tokens;
  if (!counts) return undefined;
  return { inputTokens: counts.input_tokens ?? 0, outputTokens: counts.output_tokens ?? 0 };
}

const chatResponseSchema = z.looseObject({
  finish_reason: z.string().nullish(),
  message: z.looseObject({
    content: z.array(z.looseObject({ type: z.string(), text: z.string().nullish() })).nullish(),
    tool_calls: z
      .array(z.looseObject({ id: z.string().nullish(), function: z.looseObject({ name: z.string(), arguments: z.string().nullish() }) }))
      .nullish(),
  }),
  usage: cohereUsageSchema.nullish(),
});

export function parseCohereChatResponse(body: unknown, context: TranslationContext) {
  const parsed = parseUpstreamBody(chatResponseSchema, body, 'cohere', 'The cohere upstream answered with an unreadable chat response');
  const { message } = parsed;
  const texts = (message.content ?? []).flatMap((part) => (part.type === 'text' && part.text ? [part.text] : []));
  const toolCalls: ToolCall[] = (message.tool_calls ?? []).map((call, index) => ({
    id: call.id ?? `call_${context.requestId}_${index}`,
    type: 'function',
    function: { name: call.function.name, arguments: call.function.arguments ?? '{}' },
  }));
  const usage = cohereUsage(parsed.usage);
  const completion = buildChatCompletion(
    context,
    [{ content: texts.length > 0 ? texts.join('') : null, toolCalls, finishReason: cohereFinishReason(parsed.finish_reason) }],
    usage,
  );
  return { body: completion, usage };
}
