import type { StreamEvent } from '../../pipeline/stage.js';
import type { Usage } from '../../protocol/usage.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { StreamTranslator, TranslationContext, UpstreamStreamMessage } from '../http/provider-adapter.js';
import { createChunkBuilder } from '../openai/chat-chunks.js';
import { cohereFinishReason, cohereUsage, cohereUsageSchema } from './cohere-chat-response.js';

interface CohereStreamEvent {
  type?: string;
  index?: number;
  delta?: {
    message?: {
      content?: { text?: string };
      tool_calls?: { id?: string; function?: { name?: string; arguments?: string } };
    };
    finish_reason?: string;
    usage?: unknown;
    error?: string;
  };
}

/**
 * Chat v2 streaming (https://docs.cohere.com/v2/docs/streaming) → OpenAI chunks. Tool calls are
 * numbered in the order they start; tool-plan deltas (Cohere's reasoning before a call) and
 * citations have no OpenAI counterpart and are dropped.
 */
export function createCohereStreamTranslator(context: TranslationContext): StreamTranslator {
  const chunks = createChunkBuilder(context);
  const toolIndexByEvent = new Map<number, number>();
  let usage: Usage | undefined;
  let usageSent = false;

  return {
    translate(message: UpstreamStreamMessage): StreamEvent[] {
      // Some upstreams end with OpenAI's `[DONE]` sentinel; it carries nothing.
      if (message.data.trim() === '' || message.data === '[DONE]') return [];
      const event = JSON.parse(message.data) as CohereStreamEvent;
      const delta = event.delta;
      switch (event.type ?? message.event) {
        case 'message-start':
          return [chunks.delta({ role: 'assistant', content: '' })];
        case 'content-delta': {
          const text = delta?.message?.content?.text;
          return text ? [chunks.delta({ content: text })] : [];
        }
        case 'tool-call-start': {
          const call = delta?.message?.tool_calls;
          const toolIndex = toolIndexByEvent.size;
          toolIndexByEvent.set(event.index ?? toolIndex, toolIndex);
          return [
            chunks.delta({
              tool_calls: [
                {
                  index: toolIndex,
                  id: call?.id,
                  type: 'function',
                  function: { name: call?.function?.name, arguments: call?.function?.arguments ?? '' },
                },
              ],
            }),
          ];
        }
        case 'tool-call-delta': {
          const argumentsDelta = delta?.message?.tool_calls?.function?.arguments;
          const toolIndex = toolIndexByEvent.get(event.index ?? 0);
          if (!argumentsDelta || toolIndex === undefined) return [];
          return [chunks.delta({ tool_calls: [{ index: toolIndex, function: { arguments: argumentsDelta } }] })];
        }
        case 'message-end': {
          if (delta?.finish_reason === 'ERROR' && delta.error) {
            throw new GatewayError('upstream_bad_response', `The cohere upstream failed mid-stream: ${delta.error}`, { provider: 'cohere' });
          }
          const parsed = cohereUsageSchema.safeParse(delta?.usage);
          usage = parsed.success ? cohereUsage(parsed.data) : undefined;
          const events = [chunks.delta({}, cohereFinishReason(delta?.finish_reason) ?? 'stop')];
          if (usage) {
            usageSent = true;
            events.push(chunks.usage(usage));
          }
          return events;
        }
        default:
          // content-start, content-end, tool-plan-delta, tool-call-end, citation-start/end, debug.
          return [];
      }
    },
    finish(): StreamEvent[] {
      if (usageSent || !usage) return [];
      usageSent = true;
      return [chunks.usage(usage)];
    },
  };
}
