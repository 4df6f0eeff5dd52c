import { GatewayError } from '../../errors/gateway-error.js';
import type { StreamEvent } from '../../pipeline/stage.js';
import type { ChatCompletionChunk, UsageBody } from '../../protocol/chat.js';
import type { Operation } from '../../protocol/endpoints.js';
import { usageToOpenAI, type Usage } from '../../protocol/usage.js';

interface AnswerChoice {
  index?: number;
  message?: { content?: string | null; tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>; refusal?: string | null };
  text?: string;
  finish_reason?: string | null;
  logprobs?: unknown;
}

interface Answer {
  id?: string;
  created?: number;
  model?: string;
  system_fingerprint?: string | null;
  choices?: AnswerChoice[];
  usage?: UsageBody;
}

/**
 * A whole chat or completion answer as the stream the client asked for, for an upstream that
 * answered a stream request with plain JSON: per choice one chunk with the role and the whole
 * content (tool calls, refusal), then one with the finish reason; then the usage chunk, flagged
 * usage-only so the client gets it only when it asked (stream_options.include_usage), and metered
 * as any stream's. `id`, `created` and `model` are the answer's.
 */
export function answerAsStream(operation: Operation, body: unknown, usage: Usage | undefined, provider: string): AsyncIterable<StreamEvent> {
  const answer = body as Answer | null;
  if (typeof answer !== 'object' || answer === null || !Array.isArray(answer.choices)) {
    throw new GatewayError('upstream_bad_response', `The provider answered a stream request with an unexpected body (${provider}).`, { provider });
  }
  const chat = operation === 'chat';
  const base: Record<string, unknown> = {
    id: answer.id,
    object: chat ? 'chat.completion.chunk' : 'text_completion',
    created: answer.created,
    model: answer.model,
  };
  if (answer.system_fingerprint !== undefined) base.system_fingerprint = answer.system_fingerprint;
  const chunk = (choices: unknown[], extra?: Record<string, unknown>): StreamEvent => ({ chunk: { ...base, choices, ...extra } as ChatCompletionChunk });
  const events: StreamEvent[] = [];
  answer.choices.forEach((choice, position) => {
    const index = choice.index ?? position;
    const finish = { index, finish_reason: choice.finish_reason ?? 'stop' };
    if (chat) {
      events.push(chunk([{ index, delta: chatDelta(choice), logprobs: choice.logprobs ?? null, finish_reason: null }]));
      events.push(chunk([{ ...finish, delta: {} }]));
    } else {
      events.push(chunk([{ index, text: choice.text ?? '', logprobs: choice.logprobs ?? null, finish_reason: null }]));
      events.push(chunk([{ ...finish, text: '', logprobs: null }]));
    }
  });
  if (usage !== undefined) events.push({ ...chunk([], { usage: answer.usage ?? usageToOpenAI(usage) }), usage, usageOnly: true });
  return fromList(events);
}

function chatDelta(choice: AnswerChoice): Record<string, unknown> {
  const message = choice.message ?? {};
  const delta: Record<string, unknown> = { role: 'assistant', content: message.content ?? (message.tool_calls?.length ? null : '') };
  if (message.tool_calls?.length) {
    delta.tool_calls = message.tool_calls.map((call, index) => ({ index, id: call.id, type: call.type ?? 'function', function: call.function }));
  }
  if (typeof message.refusal === 'string') delta.refusal = message.refusal;
  return delta;
}

async function* fromList(events: StreamEvent[]): AsyncGenerator<StreamEvent> {
  yield* events;
}
