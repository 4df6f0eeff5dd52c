import type { ChatCompletion, ChatCompletionChunk, FinishReason, ToolCall, UsageBody } from '../protocol/chat.js';

interface ChoiceState {
  content: string;
  sawContent: boolean;
  refusal: string | null;
  toolCalls: Map<number, ToolCall>;
  /** The legacy `functions` answer: one call, its name and arguments sent in fragments. */
  functionCall: { name: string; arguments: string } | undefined;
  logprobs: TokenLogprobs | undefined;
  finishReason: FinishReason | null;
}

/** A choice's `logprobs`: per-token entries of the content and of the refusal, each streamed in slices. */
interface TokenLogprobs {
  content: unknown[] | null;
  refusal: unknown[] | null;
}

/** What the assembled ChatCompletion can say. Anything else in a choice (audio, reasoning, …) would be lost. */
const KNOWN_CHOICE_FIELDS = new Set(['index', 'delta', 'finish_reason', 'logprobs']);
const KNOWN_DELTA_FIELDS = new Set(['role', 'content', 'refusal', 'tool_calls', 'function_call']);
const KNOWN_TOOL_CALL_FIELDS = new Set(['index', 'id', 'type', 'function']);
const KNOWN_LOGPROBS_FIELDS = new Set(['content', 'refusal']);

export interface ChatStreamAssembler {
  add(chunk: ChatCompletionChunk): void;
  /** Usage reported outside a chunk (a usage-only event whose chunk lacks it). */
  setUsage(usage: UsageBody): void;
  /**
   * The whole answer, or undefined when it is not complete (a choice without finish_reason) or a
   * chunk carried a choice field the ChatCompletion cannot hold: storing that answer would replay
   * less than the upstream said.
   */
  finish(): ChatCompletion | undefined;
}

/**
 * Folds a chat stream into the ChatCompletion the same request would have returned without
 * streaming: content concatenated, tool-call and function-call fragments joined, logprobs slices
 * concatenated, finish reason and usage kept. Fields outside the choices that describe the
 * response rather than the answer (e.g. service_tier, a provider's own metadata) are left out.
 * One assembler per stream.
 */
export function createChatStreamAssembler(): ChatStreamAssembler {
  const choices = new Map<number, ChoiceState>();
  let header: Pick<ChatCompletion, 'id' | 'created' | 'model'> | undefined;
  let systemFingerprint: string | null | undefined;
  let usage: UsageBody | undefined;
  let unrepresentable = false;

  return {
    add(chunk) {
      header ??= { id: chunk.id, created: chunk.created, model: chunk.model };
      if (typeof chunk.system_fingerprint === 'string') systemFingerprint = chunk.system_fingerprint;
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices ?? []) {
        let state = choices.get(choice.index);
        if (!state) {
          state = { content: '', sawContent: false, refusal: null, toolCalls: new Map(), functionCall: undefined, logprobs: undefined, finishReason: null };
          choices.set(choice.index, state);
        }
        const delta = choice.delta ?? {};
        if (hasUnknownFields(choice, KNOWN_CHOICE_FIELDS) || hasUnknownFields(delta, KNOWN_DELTA_FIELDS)) unrepresentable = true;
        if (typeof delta.content === 'string') {
          state.content += delta.content;
          state.sawContent = true;
        }
        if (typeof delta.refusal === 'string') state.refusal = (state.refusal ?? '') + delta.refusal;
        for (const fragment of delta.tool_calls ?? []) {
          if (hasUnknownFields(fragment, KNOWN_TOOL_CALL_FIELDS)) unrepresentable = true;
          const call = state.toolCalls.get(fragment.index) ?? { id: '', type: 'function', function: { name: '', arguments: '' } };
          if (fragment.id) call.id = fragment.id;
          if (fragment.function?.name) call.function.name += fragment.function.name;
          if (fragment.function?.arguments) call.function.arguments += fragment.function.arguments;
          state.toolCalls.set(fragment.index, call);
        }
        const functionCall = (delta as { function_call?: { name?: unknown; arguments?: unknown } | null }).function_call;
        if (functionCall) {
          state.functionCall ??= { name: '', arguments: '' };
          if (typeof functionCall.name === 'string') state.functionCall.name += functionCall.name;
          if (typeof functionCall.arguments === 'string') state.functionCall.arguments += functionCall.arguments;
        }
        if (!addLogprobs(state, choice.logprobs)) unrepresentable = true;
        if (choice.finish_reason) state.finishReason = choice.finish_reason;
      }
    },
    setUsage(value) {
      usage ??= value;
    },
    finish() {
      if (!header || choices.size === 0 || unrepresentable) return undefined;
      const assembled: ChatCompletion = {
        id: header.id,
        object: 'chat.completion',
        created: header.created,
        model: header.model,
        choices: [],
      };
      for (const [index, state] of [...choices.entries()].sort((left, right) => left[0] - right[0])) {
        if (state.finishReason === null) return undefined;
        const calledSomething = state.toolCalls.size > 0 || state.functionCall !== undefined;
        const message: ChatCompletion['choices'][number]['message'] & { function_call?: { name: string; arguments: string } } = {
          role: 'assistant',
          content: state.sawContent || !calledSomething ? state.content : null,
        };
        if (state.refusal !== null) message.refusal = state.refusal;
        if (state.toolCalls.size > 0) {
          message.tool_calls = [...state.toolCalls.entries()].sort((left, right) => left[0] - right[0]).map(([, call]) => call);
        }
        if (state.functionCall) message.function_call = state.functionCall;
        const assembledChoice: ChatCompletion['choices'][number] = { index, message, finish_reason: state.finishReason };
        if (state.logprobs) assembledChoice.logprobs = state.logprobs;
        assembled.choices.push(assembledChoice);
      }
      if (systemFingerprint !== undefined) assembled.system_fingerprint = systemFingerprint;
      if (usage) assembled.usage = usage;
      return assembled;
    },
  };
}

/** Joins one chunk's logprobs slices onto the choice's; false when they have a shape we do not know. */
function addLogprobs(state: ChoiceState, logprobs: unknown): boolean {
  if (logprobs === null || logprobs === undefined) return true;
  if (typeof logprobs !== 'object' || Array.isArray(logprobs) || hasUnknownFields(logprobs, KNOWN_LOGPROBS_FIELDS)) return false;
  const { content, refusal } = logprobs as { content?: unknown; refusal?: unknown };
  if ((content != null && !Array.isArray(content)) || (refusal != null && !Array.isArray(refusal))) return false;
  state.logprobs ??= { content: null, refusal: null };
  // A chunk carries a token or a few: pushing keeps a long answer linear.
  if (Array.isArray(content)) for (const entry of content) (state.logprobs.content ??= []).push(entry);
  if (Array.isArray(refusal)) for (const entry of refusal) (state.logprobs.refusal ??= []).push(entry);
  return true;
}

/** A field we do not know, with a value: null and empty arrays say nothing, so they are not counted. */
function hasUnknownFields(value: object, known: ReadonlySet<string>): boolean {
  for (const [field, member] of Object.entries(value)) {
    if (known.has(field) || member === null || member === undefined) continue;
    if (Array.isArray(member) && member.length === 0) continue;
    return true;
  }
  return false;
}
