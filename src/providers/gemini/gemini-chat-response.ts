import { z } from 'zod';
import type { FinishReason, ToolCall } from '../../protocol/chat.js';
import type { Usage } from '../../protocol/usage.js';
import { parseUpstreamBody } from '../http/parse-upstream-body.js';
import type { TranslationContext } from '../http/provider-adapter.js';
import { buildChatCompletion, type ChoiceInput } from '../openai/chat-chunks.js';

const partSchema = z.looseObject({
  text: z.string().nullish(),
  thought: z.boolean().nullish(),
  functionCall: z.looseObject({ id: z.string().nullish(), name: z.string(), args: z.unknown().optional() }).nullish(),
});
export type GeminiPart = z.infer<typeof partSchema>;

export const geminiResponseSchema = z.looseObject({
  candidates: z
    .array(
      z.looseObject({
        content: z.looseObject({ parts: z.array(partSchema).nullish() }).nullish(),
        finishReason: z.string().nullish(),
        index: z.number().nullish(),
      }),
    )
    .nullish(),
  promptFeedback: z.looseObject({ blockReason: z.string().nullish() }).nullish(),
  usageMetadata: z
    .looseObject({
      promptTokenCount: z.number().nullish(),
      cachedContentTokenCount: z.number().nullish(),
      candidatesTokenCount: z.number().nullish(),
      thoughtsTokenCount: z.number().nullish(),
      toolUsePromptTokenCount: z.number().nullish(),
    })
    .nullish(),
});
export type GeminiResponse = z.infer<typeof geminiResponseSchema>;

const CONTENT_FILTER_REASONS = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'LANGUAGE']);

/** Gemini FinishReason (https://ai.google.dev/api/generate-content#FinishReason) → OpenAI finish_reason. */
export function geminiFinishReason(reason: string | null | undefined, hasToolCalls: boolean): FinishReason | null {
  if (!reason || reason === 'FINISH_REASON_UNSPECIFIED') return null;
  if (CONTENT_FILTER_REASONS.has(reason)) return 'content_filter';
  if (reason === 'MAX_TOKENS') return 'length';
  // Gemini reports STOP after a function call; OpenAI clients expect tool_calls there.
  return hasToolCalls ? 'tool_calls' : 'stop';
}

/** promptTokenCount includes cached tokens, candidatesTokenCount excludes thoughts: split into disjoint classes. */
export function geminiUsage(metadata: NonNullable<GeminiResponse['usageMetadata']>): Usage {
  const cached = metadata.cachedContentTokenCount ?? 0;
  const prompt = (metadata.promptTokenCount ?? 0) + (metadata.toolUsePromptTokenCount ?? 0);
  const usage: Usage = { inputTokens: Math.max(0, prompt - cached), outputTokens: metadata.candidatesTokenCount ?? 0 };
  if (cached) usage.cachedInputTokens = cached;
  if (metadata.thoughtsTokenCount) usage.reasoningTokens = metadata.thoughtsTokenCount;
  return usage;
}

export function geminiToolCallId(context: TranslationContext, candidateIndex: number, callIndex: number, id?: string | null): string {
  return id ?? `call_${context.requestId}_${candidateIndex}_${callIndex}`;
}

export function parseGeminiResponse(body: unknown, context: TranslationContext) {
  const response = parseUpstreamBody(geminiResponseSchema, body, 'gemini', 'The gemini upstream answered with an unreadable response');
  const choices: ChoiceInput[] = (response.candidates ?? []).map((candidate, position) => {
    const candidateIndex = candidate.index ?? position;
    const texts: string[] = [];
    const toolCalls: ToolCall[] = [];
    for (const part of candidate.content?.parts ?? []) {
      if (part.text && !part.thought) texts.push(part.text);
      if (part.functionCall) {
        toolCalls.push({
          id: geminiToolCallId(context, candidateIndex, toolCalls.length, part.functionCall.id),
          type: 'function',
          function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) },
        });
      }
    }
    return {
      content: texts.length > 0 ? texts.join('') : null,
      toolCalls,
      finishReason: geminiFinishReason(candidate.finishReason, toolCalls.length > 0),
    };
  });
  // A blocked prompt has no candidates, only promptFeedback.blockReason.
  if (choices.length === 0) {
    choices.push({ content: null, toolCalls: [], finishReason: response.promptFeedback?.blockReason ? 'content_filter' : 'stop' });
  }
  const usage = response.usageMetadata ? geminiUsage(response.usageMetadata) : undefined;
  return { body: buildChatCompletion(context, choices, usage), usage };
}
