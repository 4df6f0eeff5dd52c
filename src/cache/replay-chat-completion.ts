import type { StreamEvent } from '../pipeline/stage.js';
import type { ChatCompletion, ChatCompletionChunk } from '../protocol/chat.js';

type Choice = ChatCompletion['choices'][number];
type Message = Choice['message'] & { function_call?: { name?: string; arguments?: string } | null };

/** What replayChatCompletion turns into chunks; a stored answer with more cannot be replayed whole. */
const REPLAYED_CHOICE_FIELDS = new Set(['index', 'message', 'finish_reason', 'logprobs']);
const REPLAYED_MESSAGE_FIELDS = new Set(['role', 'content', 'refusal', 'tool_calls', 'function_call']);

/**
 * True when every choice of a stored answer is made of what replayChatCompletion sends. A JSON
 * answer may hold more (audio, annotations): a stream request for it is then not answered from the
 * cache, since the replay would silently drop part of the answer.
 */
export function canReplayAsStream(completion: ChatCompletion): boolean {
  if (!Array.isArray(completion?.choices)) return false;
  return completion.choices.every(
    (choice) => onlyKnownFields(choice, REPLAYED_CHOICE_FIELDS) && onlyKnownFields(choice.message ?? {}, REPLAYED_MESSAGE_FIELDS),
  );
}

/**
 * Turns a stored ChatCompletion into the chunks a live stream would have sent: per choice a role
 * chunk, the content (with its logprobs), the refusal, tool calls or the legacy function call and
 * the finish reason; then, when the client asked for it (stream_options.include_usage), the usage
 * chunk with empty choices.
 */
export function replayChatCompletion(completion: ChatCompletion, includeUsage: boolean): StreamEvent[] {
  const { id, created, model } = completion;
  // Written out whole, not spread from a shared base: a key added to a spread copy makes a fresh
  // hidden class per chunk on Node 20 (see buildContext in src/providers/http/create-http-provider.ts).
  const chunk = (choices: ChatCompletionChunk['choices']): StreamEvent => ({ chunk: { id, object: 'chat.completion.chunk', created, model, choices } });
  const events: StreamEvent[] = [];
  for (const choice of completion.choices) {
    const { index } = choice;
    const message = choice.message as Message;
    events.push(chunk([{ index, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
    const logprobs = choice.logprobs ?? undefined;
    if ((typeof message.content === 'string' && message.content.length > 0) || logprobs !== undefined) {
      const content = typeof message.content === 'string' ? message.content : '';
      events.push(chunk([{ index, delta: { content }, finish_reason: null, ...(logprobs !== undefined ? { logprobs } : {}) }]));
    }
    if (typeof message.refusal === 'string') events.push(chunk([{ index, delta: { refusal: message.refusal }, finish_reason: null }]));
    if (message.tool_calls && message.tool_calls.length > 0) {
      const toolCalls = message.tool_calls.map((call, position) => ({
        index: position,
        id: call.id,
        type: 'function' as const,
        function: { name: call.function.name, arguments: call.function.arguments },
      }));
      events.push(chunk([{ index, delta: { tool_calls: toolCalls }, finish_reason: null }]));
    }
    if (message.function_call) {
      const functionCall = { name: message.function_call.name ?? '', arguments: message.function_call.arguments ?? '' };
      events.push(chunk([{ index, delta: { function_call: functionCall } as ChatCompletionChunk['choices'][number]['delta'], finish_reason: null }]));
    }
    events.push(chunk([{ index, delta: {}, finish_reason: choice.finish_reason }]));
  }
  if (includeUsage && completion.usage) {
    // Not flagged usageOnly: that flag marks a chunk the client did not ask for, and this one it did.
    // No `usage` on the event either: a hit costs nothing, and metering reads that field.
    events.push({ chunk: { id, object: 'chat.completion.chunk', created, model, choices: [], usage: completion.usage } });
  }
  return events;
}

/** Null and empty arrays say nothing (OpenAI sends `audio: null`, `annotations: []`), so they do not count. */
function onlyKnownFields(value: object, known: ReadonlySet<string>): boolean {
  return Object.entries(value).every(([field, member]) => known.has(field) || member == null || (Array.isArray(member) && member.length === 0));
}
