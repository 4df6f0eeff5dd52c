import type { StreamEvent } from '../../pipeline/stage.js';
import type { Usage } from '../../protocol/usage.js';
import { parseUpstreamBody } from '../http/parse-upstream-body.js';
import type { StreamTranslator, TranslationContext, UpstreamStreamMessage } from '../http/provider-adapter.js';
import { createChunkBuilder } from '../openai/chat-chunks.js';
import { geminiFinishReason, geminiResponseSchema, geminiToolCallId, geminiUsage } from './gemini-chat-response.js';
import { parseGeminiError } from './gemini-error.js';

/**
 * streamGenerateContent?alt=sse: every event is a whole GenerateContentResponse holding the next
 * piece of each candidate; usageMetadata is cumulative, so the last one is the call's usage.
 * Function calls arrive whole (no argument deltas), one tool_calls delta each.
 */
export function createGeminiStreamTranslator(context: TranslationContext): StreamTranslator {
  const chunks = createChunkBuilder(context);
  const started = new Set<number>();
  const toolCallCount = new Map<number, number>();
  let usage: Usage | undefined;

  return {
    translate(message: UpstreamStreamMessage): StreamEvent[] {
      // Some upstreams end with OpenAI's `[DONE]` sentinel; it carries nothing.
      if (message.data.trim() === '' || message.data === '[DONE]') return [];
      const json: unknown = JSON.parse(message.data);
      if (typeof json === 'object' && json !== null && 'error' in json) {
        const status = Number((json as { error?: { code?: unknown } }).error?.code) || 500;
        throw parseGeminiError(status, json, {});
      }
      const response = parseUpstreamBody(geminiResponseSchema, json, 'gemini', 'The gemini upstream sent an unreadable stream event');
      if (response.usageMetadata) usage = geminiUsage(response.usageMetadata);
      const events: StreamEvent[] = [];
      const startChoice = (index: number) => {
        if (started.has(index)) return;
        started.add(index);
        events.push(chunks.delta({ role: 'assistant', content: '' }, null, index));
      };
      if ((response.candidates ?? []).length === 0 && response.promptFeedback?.blockReason) {
        startChoice(0);
        events.push(chunks.delta({}, 'content_filter', 0));
      }
      (response.candidates ?? []).forEach((candidate, position) => {
        const index = candidate.index ?? position;
        startChoice(index);
        for (const part of candidate.content?.parts ?? []) {
          if (part.text && !part.thought) events.push(chunks.delta({ content: part.text }, null, index));
          if (part.functionCall) {
            const callIndex = toolCallCount.get(index) ?? 0;
            toolCallCount.set(index, callIndex + 1);
            const call = part.functionCall;
            events.push(
              chunks.delta(
                {
                  tool_calls: [
                    {
                      index: callIndex,
                      id: geminiToolCallId(context, index, callIndex, call.id),
                      type: 'function',
                      function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
                    },
                  ],
                },
                null,
                index,
              ),
            );
          }
        }
        const finishReason = geminiFinishReason(candidate.finishReason, (toolCallCount.get(index) ?? 0) > 0);
        if (finishReason) events.push(chunks.delta({}, finishReason, index));
      });
      return events;
    },
    finish(): StreamEvent[] {
      return usage ? [chunks.usage(usage)] : [];
    },
  };
}
