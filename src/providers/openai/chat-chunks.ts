import type { ChatCompletion, ChatCompletionChunk, FinishReason, ToolCall } from '../../protocol/chat.js';
import { usageToOpenAI, type Usage } from '../../protocol/usage.js';
import type { StreamEvent } from '../../pipeline/stage.js';
import type { TranslationContext } from '../http/provider-adapter.js';

type ChunkDelta = ChatCompletionChunk['choices'][number]['delta'];

/** Builds the canonical chunks of one stream, all with the same id, created and public model. */
export interface ChunkBuilder {
  delta(delta: ChunkDelta, finishReason?: FinishReason | null, index?: number): StreamEvent;
  /** The trailing usage-only chunk (`choices: []`), as OpenAI sends with stream_options.include_usage. */
  usage(usage: Usage): StreamEvent;
}

export function completionId(context: Pick<TranslationContext, 'requestId'>): string {
  return `chatcmpl-${context.requestId}`;
}

export function createChunkBuilder(context: TranslationContext): ChunkBuilder {
  const id = completionId(context);
  const { created, model } = context;
  // Each chunk is written out whole rather than spread from a shared base plus `choices`: on Node 20
  // a key added to a spread copy makes a fresh hidden class every time, ~1.3 µs and a class for the
  // full collector per chunk (see buildContext in src/providers/http/create-http-provider.ts).
  return {
    delta(delta, finishReason = null, index = 0) {
      return { chunk: { id, object: 'chat.completion.chunk', created, model, choices: [{ index, delta, finish_reason: finishReason }] } };
    },
    usage(usage) {
      return { chunk: { id, object: 'chat.completion.chunk', created, model, choices: [], usage: usageToOpenAI(usage) }, usage, usageOnly: true };
    },
  };
}

export interface ChoiceInput {
  content: string | null;
  toolCalls: ToolCall[];
  finishReason: FinishReason | null;
}

/** A canonical chat completion from translated choices. */
export function buildChatCompletion(context: TranslationContext, choices: ChoiceInput[], usage?: Usage): ChatCompletion {
  const completion: ChatCompletion = {
    id: completionId(context),
    object: 'chat.completion',
    created: context.created,
    model: context.model,
    choices: choices.map((choice, index) => ({
      index,
      message: {
        role: 'assistant',
        content: choice.content,
        ...(choice.toolCalls.length > 0 ? { tool_calls: choice.toolCalls } : {}),
      },
      finish_reason: choice.finishReason,
    })),
  };
  if (usage) completion.usage = usageToOpenAI(usage);
  return completion;
}
