import { COMPLETION_DEFAULT_MAX_TOKENS, type CompletionRequest, type TextCompletion } from '../../protocol/completions.js';
import { usageToOpenAI, type Usage } from '../../protocol/usage.js';
import type { Outcome, StreamEvent } from '../../pipeline/stage.js';
import type { Invocation } from '../provider.js';
import { abortError, applyMarkers, sleep, stripMarkers } from './local-markers.js';
import type { LocalStreamOptions } from './local-chat.js';
import { truncateText } from './message-text.js';
import { countTokens, cutAtStop, cutToTokens, type TokenCut } from './token-pieces.js';
import type { CallSignal } from '../../lib/call-signal.js';

interface CompletionChoice {
  cut: TokenCut;
  finishReason: 'stop' | 'length';
}

/**
 * Legacy text completions from the local chat models: a continuation derived from the prompt,
 * max_tokens 16 by default. Streams are text_completion chunks, carried as raw JSON since the
 * pipeline's typed chunk is the chat one.
 */
export async function runLocalCompletion(invocation: Invocation, options: LocalStreamOptions): Promise<Outcome> {
  const { call, signal } = invocation;
  const request = call.request as unknown as CompletionRequest;
  const prompts = typeof request.prompt === 'string' ? [request.prompt] : request.prompt;
  await applyMarkers(prompts.join('\n'), signal);
  const count = request.n ?? 1;
  const maxTokens = request.max_tokens ?? COMPLETION_DEFAULT_MAX_TOKENS;
  const choices: CompletionChoice[] = [];
  for (const prompt of prompts) {
    for (let index = 0; index < count; index++) {
      const variant = index === 0 ? '' : ` (choice ${index + 1})`;
      const full = ` Local completion of: ${truncateText(stripMarkers(prompt), 200)}${variant}. This continuation comes from the built-in local model.`;
      const stopped = cutAtStop(full, request.stop);
      const cut = cutToTokens(stopped.text, maxTokens);
      choices.push({ cut, finishReason: cut.truncated ? 'length' : 'stop' });
    }
  }
  const usage: Usage = {
    inputTokens: prompts.reduce((sum, prompt) => sum + countTokens(prompt), 0),
    outputTokens: choices.reduce((sum, choice) => sum + choice.cut.tokenCount, 0),
  };
  const base = { id: `cmpl-${call.requestId}`, object: 'text_completion' as const, created: Math.floor(options.now() / 1000), model: call.model };
  if (call.stream) return { kind: 'stream', events: streamCompletion(base, choices, usage, signal, options.tokenDelayMs) };
  const body: TextCompletion = {
    ...base,
    choices: choices.map((choice, index) => ({ text: choice.cut.text, index, finish_reason: choice.finishReason, logprobs: null })),
    usage: usageToOpenAI(usage),
  };
  return { kind: 'json', body, usage };
}

async function* streamCompletion(
  base: Omit<TextCompletion, 'choices' | 'usage'>,
  choices: CompletionChoice[],
  usage: Usage,
  signal: CallSignal,
  tokenDelayMs: number,
): AsyncGenerator<StreamEvent> {
  const raw = (choiceList: unknown[], extra: Record<string, unknown> = {}): string =>
    JSON.stringify({ ...base, choices: choiceList, ...extra });
  for (const [index, choice] of choices.entries()) {
    for (const piece of choice.cut.pieces) {
      if (tokenDelayMs > 0) await sleep(tokenDelayMs, signal);
      if (signal.aborted) throw abortError(signal);
      yield { raw: raw([{ text: piece, index, finish_reason: null, logprobs: null }]) };
    }
    if (signal.aborted) throw abortError(signal);
    yield { raw: raw([{ text: '', index, finish_reason: choice.finishReason, logprobs: null }]) };
  }
  if (signal.aborted) throw abortError(signal);
  yield { raw: raw([], { usage: usageToOpenAI(usage) }), usage, usageOnly: true };
}
