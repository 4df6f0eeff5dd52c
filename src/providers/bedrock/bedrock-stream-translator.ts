import type { StreamEvent } from '../../pipeline/stage.js';
import type { Usage } from '../../protocol/usage.js';
import type { StreamTranslator, TranslationContext, UpstreamStreamMessage } from '../http/provider-adapter.js';
import { createChunkBuilder } from '../openai/chat-chunks.js';
import { bedrockStreamException } from './bedrock-error.js';
import { bedrockFinishReason, bedrockUsage, bedrockUsageSchema } from './bedrock-converse-response.js';

interface ConverseStreamPayload {
  contentBlockIndex?: number;
  start?: { toolUse?: { toolUseId?: string; name?: string } };
  delta?: { text?: string; toolUse?: { input?: string } };
  stopReason?: string;
  usage?: unknown;
}

/**
 * ConverseStream (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html):
 * decoded event-stream messages named by `:event-type` → OpenAI chunks. Usage comes in the
 * `metadata` event after `messageStop`, so it is emitted there (or at the end).
 */
export function createBedrockStreamTranslator(context: TranslationContext): StreamTranslator {
  const chunks = createChunkBuilder(context);
  const toolIndexByBlock = new Map<number, number>();
  let usage: Usage | undefined;
  let usageSent = false;

  return {
    translate(message: UpstreamStreamMessage): StreamEvent[] {
      const eventType = message.event ?? '';
      if (/exception$/i.test(eventType)) throw bedrockStreamException(eventType, message.data);
      // Some upstreams end with OpenAI's `[DONE]` sentinel; it carries nothing.
      if (message.data.trim() === '' || message.data === '[DONE]') return [];
      const payload = JSON.parse(message.data) as ConverseStreamPayload;
      switch (eventType) {
        case 'messageStart':
          return [chunks.delta({ role: 'assistant', content: '' })];
        case 'contentBlockStart': {
          const toolUse = payload.start?.toolUse;
          if (!toolUse) return [];
          const toolIndex = toolIndexByBlock.size;
          toolIndexByBlock.set(payload.contentBlockIndex ?? 0, toolIndex);
          return [
            chunks.delta({
              tool_calls: [{ index: toolIndex, id: toolUse.toolUseId, type: 'function', function: { name: toolUse.name, arguments: '' } }],
            }),
          ];
        }
        case 'contentBlockDelta': {
          if (payload.delta?.text) return [chunks.delta({ content: payload.delta.text })];
          const input = payload.delta?.toolUse?.input;
          const toolIndex = toolIndexByBlock.get(payload.contentBlockIndex ?? 0);
          if (input && toolIndex !== undefined) return [chunks.delta({ tool_calls: [{ index: toolIndex, function: { arguments: input } }] })];
          // reasoningContent deltas are dropped.
          return [];
        }
        case 'messageStop':
          return [chunks.delta({}, bedrockFinishReason(payload.stopReason) ?? 'stop')];
        case 'metadata': {
          const parsed = bedrockUsageSchema.safeParse(payload.usage);
          if (!parsed.success || usageSent) return [];
          usage = bedrockUsage(parsed.data);
          usageSent = true;
          return [chunks.usage(usage)];
        }
        default:
          // contentBlockStop and event types added later.
          return [];
      }
    },
    finish(): StreamEvent[] {
      return [];
    },
  };
}
