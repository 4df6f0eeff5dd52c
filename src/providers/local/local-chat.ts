import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from '../../protocol/chat.js';
import { usageToOpenAI, type Usage } from '../../protocol/usage.js';
import type { Outcome, StreamEvent } from '../../pipeline/stage.js';
import type { Invocation } from '../provider.js';
import { composeChatAnswer, type ChatAnswer } from './compose-chat-answer.js';
import { abortError, applyMarkers, sleep } from './local-markers.js';
import { lastUserText } from './message-text.js';
import type { CallSignal } from '../../lib/call-signal.js';

export interface LocalStreamOptions {
  /** Pause between streamed tokens; 0 streams as fast as the client reads. */
  tokenDelayMs: number;
  now: () => number;
}

/** Answers a chat call: a chat.completion body, or a token-by-token chunk stream. */
export async function runLocalChat(invocation: Invocation, options: LocalStreamOptions): Promise<Outcome> {
  const { call, signal } = invocation;
  const request = call.request as unknown as ChatRequest;
  await applyMarkers(lastUserText(request.messages), signal);
  const answer = composeChatAnswer(request, call.model, call.requestId);
  const usage: Usage = { inputTokens: answer.promptTokens, outputTokens: answer.completionTokens };
  const id = `chatcmpl-${call.requestId}`;
  const created = Math.floor(options.now() / 1000);
  if (call.stream) {
    return { kind: 'stream', events: streamChat(answer, usage, { id, created, model: call.model }, signal, options.tokenDelayMs) };
  }
  const body: ChatCompletion = {
    id,
    object: 'chat.completion',
    created,
    model: call.model,
    choices: answer.choices.map((choice, index) => ({
      index,
      message: {
        role: 'assistant',
        content: choice.content,
        ...(choice.toolCalls ? { tool_calls: choice.toolCalls } : {}),
        refusal: null,
      },
      finish_reason: choice.finishReason,
      logprobs: null,
    })),
    usage: usageToOpenAI(usage),
    system_fingerprint: 'local',
  };
  return { kind: 'json', body, usage };
}

interface ChunkIdentity {
  id: string;
  created: number;
  model: string;
}

async function* streamChat(
  answer: ChatAnswer,
  usage: Usage,
  identity: ChunkIdentity,
  signal: CallSignal,
  tokenDelayMs: number,
): AsyncGenerator<StreamEvent> {
  const chunk = (choices: ChatCompletionChunk['choices']): StreamEvent => ({
    chunk: { id: identity.id, object: 'chat.completion.chunk', created: identity.created, model: identity.model, choices },
  });
  const checkAbort = (): void => {
    if (signal.aborted) throw abortError(signal);
  };
  checkAbort();
  yield chunk(answer.choices.map((_, index) => ({ index, delta: { role: 'assistant', content: '' }, finish_reason: null })));
  for (const [index, choice] of answer.choices.entries()) {
    for (const [callIndex, toolCall] of (choice.toolCalls ?? []).entries()) {
      checkAbort();
      yield chunk([
        {
          index,
          delta: {
            tool_calls: [
              { index: callIndex, id: toolCall.id, type: 'function', function: { name: toolCall.function.name, arguments: '' } },
            ],
          },
          finish_reason: null,
        },
      ]);
      checkAbort();
      yield chunk([
        { index, delta: { tool_calls: [{ index: callIndex, function: { arguments: toolCall.function.arguments } }] }, finish_reason: null },
      ]);
    }
    for (const piece of choice.pieces) {
      if (tokenDelayMs > 0) await sleep(tokenDelayMs, signal);
      checkAbort();
      yield chunk([{ index, delta: { content: piece }, finish_reason: null }]);
    }
  }
  checkAbort();
  yield chunk(answer.choices.map((choice, index) => ({ index, delta: {}, finish_reason: choice.finishReason })));
  checkAbort();
  const usageEvent = chunk([]);
  usageEvent.chunk!.usage = usageToOpenAI(usage);
  yield { ...usageEvent, usage, usageOnly: true };
}
