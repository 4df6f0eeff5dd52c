import type { ChatCompletion, ChatCompletionChunk, FinishReason, ToolCall, UsageBody } from '../protocol/chat.js';

interface ChoiceState {
  content: string;
  sawContent: boolean;
  refusal: string | null;
  toolCalls: Map<number, ToolCall>;
  finishReason: FinishReason | null;
}

export interface ChatStreamAssembler {
  add(chunk: ChatCompletionChunk): void;
  /** Usage reported outside a chunk (a usage-only event whose chunk lacks it). */
  setUsage(usage: UsageBody): void;
  /** The whole answer, or undefined when it is not complete (a choice without finish_reason). */
  finish(): ChatCompletion | undefined;
}

/**
 * Folds a chat stream into the ChatCompletion the same request would have returned without
 * streaming: content concatenated, tool-call argument fragments joined per index, finish reason
 * and usage kept. One assembler per stream.
 */
export function createChatStreamAssembler(): ChatStreamAssembler {
  const choices = new Map<number, ChoiceState>();
  let header: Pick<ChatCompletion, 'id' | 'created' | 'model'> | undefined;
  let systemFingerprint: string | null | undefined;
  let usage: UsageBody | undefined;

  return {
    add(chunk) {
      header ??= { id: chunk.id, created: chunk.created, model: chunk.model };
      if (typeof chunk.system_fingerprint === 'string') systemFingerprint = chunk.system_fingerprint;
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices ?? []) {
        let state = choices.get(choice.index);
        if (!state) {
          state = { content: '', sawContent: false, refusal: null, toolCalls: new Map(), finishReason: null };
          choices.set(choice.index, state);
        }
        const delta = choice.delta ?? {};
        if (typeof delta.content === 'string') {
          state.content += delta.content;
          state.sawContent = true;
        }
        if (typeof delta.refusal === 'string') state.refusal = (state.refusal ?? '') + delta.refusal;
        for (const fragment of delta.tool_calls ?? []) {
          const call = state.toolCalls.get(fragment.index) ?? { id: '', type: 'function', function: { name: '', arguments: '' } };
          if (fragment.id) call.id = fragment.id;
          if (fragment.function?.name) call.function.name += fragment.function.name;
          if (fragment.function?.arguments) call.function.arguments += fragment.function.arguments;
          state.toolCalls.set(fragment.index, call);
        }
        if (choice.finish_reason) state.finishReason = choice.finish_reason;
      }
    },
    setUsage(value) {
      usage ??= value;
    },
    finish() {
      if (!header || choices.size === 0) return undefined;
      const assembled: ChatCompletion = {
        id: header.id,
        object: 'chat.completion',
        created: header.created,
        model: header.model,
        choices: [],
      };
      for (const [index, state] of [...choices.entries()].sort((left, right) => left[0] - right[0])) {
        if (state.finishReason === null) return undefined;
        const message: ChatCompletion['choices'][number]['message'] = {
          role: 'assistant',
          content: state.sawContent || state.toolCalls.size === 0 ? state.content : null,
        };
        if (state.refusal !== null) message.refusal = state.refusal;
        if (state.toolCalls.size > 0) {
          message.tool_calls = [...state.toolCalls.entries()].sort((left, right) => left[0] - right[0]).map(([, call]) => call);
        }
        assembled.choices.push({ index, message, finish_reason: state.finishReason });
      }
      if (systemFingerprint !== undefined) assembled.system_fingerprint = systemFingerprint;
      if (usage) assembled.usage = usage;
      return assembled;
    },
  };
}
