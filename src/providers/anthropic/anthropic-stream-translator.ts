import type { StreamEvent } from '../../pipeline/stage.js';
import type { Usage } from '../../protocol/usage.js';
import type { StreamTranslator, TranslationContext, UpstreamStreamMessage } from '../http/provider-adapter.js';
import { createChunkBuilder } from '../openai/chat-chunks.js';
import { anthropicFinishReason, anthropicUsage, anthropicUsageSchema } from './anthropic-messages-response.js';
import { anthropicStreamError } from './anthropic-error.js';

interface AnthropicEvent {
  type?: string;
  index?: number;
  message?: { usage?: unknown };
  content_block?: { type?: string; id?: string; name?: string; text?: string };
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: unknown;
  error?: { type?: string; message?: string };
}

/**
 * Messages streaming (https://docs.anthropic.com/en/docs/build-with-claude/streaming) → OpenAI chunks.
 * Tool-use blocks are numbered by their order among tool blocks (OpenAI's tool_calls[].index), not
 * by Anthropic's content-block index, which also counts text and thinking blocks.
 */
export function createAnthropicStreamTranslator(context: TranslationContext): StreamTranslator {
  const chunks = createChunkBuilder(context);
  const toolIndexByBlock = new Map<number, number>();
  let usage: Usage | undefined;
  let usageSent = false;

  const mergeUsage = (raw: unknown) => {
    const parsed = anthropicUsageSchema.safeParse(raw);
    if (!parsed.success) return;
    // message_delta usage is cumulative and may carry only output_tokens; keep what message_start said otherwise.
    const next = anthropicUsage(parsed.data);
    usage = {
      ...usage,
      ...(parsed.data.input_tokens != null ? { inputTokens: next.inputTokens } : {}),
      ...(parsed.data.output_tokens != null ? { outputTokens: next.outputTokens } : {}),
      ...(next.cachedInputTokens ? { cachedInputTokens: next.cachedInputTokens } : {}),
      ...(next.cacheWriteInputTokens ? { cacheWriteInputTokens: next.cacheWriteInputTokens } : {}),
    };
  };
  const usageEvents = (): StreamEvent[] => {
    if (usageSent || !usage) return [];
    usageSent = true;
    return [chunks.usage(usage)];
  };

  return {
    translate(message: UpstreamStreamMessage): StreamEvent[] {
      // Some upstreams end with OpenAI's `[DONE]` sentinel; it carries nothing.
      if (message.data.trim() === '' || message.data === '[DONE]') return [];
      const event = JSON.parse(message.data) as AnthropicEvent;
      switch (event.type ?? message.event) {
        case 'message_start':
          mergeUsage(event.message?.usage);
          return [chunks.delta({ role: 'assistant', content: '' })];
        case 'content_block_start': {
          const block = event.content_block;
          if (block?.type === 'tool_use') {
            const toolIndex = toolIndexByBlock.size;
            toolIndexByBlock.set(event.index ?? 0, toolIndex);
            return [
              chunks.delta({
                tool_calls: [{ index: toolIndex, id: block.id, type: 'function', function: { name: block.name, arguments: '' } }],
              }),
            ];
          }
          if (block?.type === 'text' && block.text) return [chunks.delta({ content: block.text })];
          return [];
        }
        case 'content_block_delta': {
          const delta = event.delta;
          if (delta?.type === 'text_delta' && delta.text) return [chunks.delta({ content: delta.text })];
          if (delta?.type === 'input_json_delta' && delta.partial_json) {
            const toolIndex = toolIndexByBlock.get(event.index ?? 0);
            if (toolIndex === undefined) return [];
            return [chunks.delta({ tool_calls: [{ index: toolIndex, function: { arguments: delta.partial_json } }] })];
          }
          // thinking_delta, signature_delta, citations_delta: nothing in the OpenAI chunk shape carries them.
          return [];
        }
        case 'message_delta':
          mergeUsage(event.usage);
          return [chunks.delta({}, anthropicFinishReason(event.delta?.stop_reason) ?? 'stop')];
        case 'message_stop':
          return usageEvents();
        case 'error':
          throw anthropicStreamError(event.error);
        default:
          // ping, content_block_stop, and event types added later.
          return [];
      }
    },
    finish(): StreamEvent[] {
      return usageEvents();
    },
  };
}
