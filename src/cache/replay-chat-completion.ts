import type { StreamEvent } from '../pipeline/stage.js';
import type { ChatCompletion, ChatCompletionChunk } from '../protocol/chat.js';

/**
 * Turns a stored ChatCompletion into the chunks a live stream would have sent: per choice a role
 * chunk, the content, tool calls and the finish reason; then, when the client asked for it
 * (stream_options.include_usage), the usage chunk with empty choices.
 */
export function replayChatCompletion(completion: ChatCompletion, includeUsage: boolean): StreamEvent[] {
  const base = { id: completion.id, object: 'chat.completion.chunk' as const, created: completion.created, model: completion.model };
  const chunk = (choices: ChatCompletionChunk['choices']): StreamEvent => ({ chunk: { ...base, choices } });
  const events: StreamEvent[] = [];
  for (const choice of completion.choices) {
    const { index, message } = choice;
    events.push(chunk([{ index, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
    if (typeof message.content === 'string' && message.content.length > 0) {
      events.push(chunk([{ index, delta: { content: message.content }, finish_reason: null }]));
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
    events.push(chunk([{ index, delta: {}, finish_reason: choice.finish_reason }]));
  }
  if (includeUsage && completion.usage) {
    // Not flagged usageOnly: that flag marks a chunk the client did not ask for, and this one it did.
    // No `usage` on the event either: a hit costs nothing, and metering reads that field.
    events.push({ chunk: { ...base, choices: [], usage: completion.usage } });
  }
  return events;
}
