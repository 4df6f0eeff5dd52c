/**
 * The text a chat answer produced, for calls whose upstream reported no usage: they are charged
 * the tokens of it (docs/money.md). Content alone would let an answer that only calls tools go
 * unpaid, so each function call's name and arguments count too. Works alike on a whole message
 * and on a stream delta (the same fields, arguments in fragments). Bodies can be an upstream's
 * unvalidated JSON, hence the check on every value's type.
 */

/** A function call as a message or delta carries it: `tool_calls[].function`, or the legacy `function_call`. */
interface FunctionCallFields {
  name?: unknown;
  arguments?: unknown;
}

/** The fields of a chat message, or of a stream delta, that hold produced text. */
export interface ProducedMessageFields {
  content?: unknown;
  tool_calls?: unknown;
  function_call?: FunctionCallFields | null;
}

/** Appends the produced text of one message or delta to `parts`; `text` is a completion choice's. */
export function collectProducedText(message: ProducedMessageFields | null | undefined, text: unknown, parts: string[]): void {
  const content = message?.content;
  pushText(content ?? text, parts);
  const toolCalls = message?.tool_calls;
  if (Array.isArray(toolCalls)) {
    for (const toolCall of toolCalls as Array<{ function?: FunctionCallFields | null } | null>) pushFunctionCall(toolCall?.function, parts);
  }
  pushFunctionCall(message?.function_call, parts);
}

function pushFunctionCall(call: FunctionCallFields | null | undefined, parts: string[]): void {
  if (!call) return;
  pushText(call.name, parts);
  pushText(call.arguments, parts);
}

export function pushText(text: unknown, parts: string[]): void {
  if (typeof text === 'string' && text.length > 0) parts.push(text);
}
