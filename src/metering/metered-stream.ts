import type { StreamEvent } from '../pipeline/stage.js';
import type { Usage } from '../protocol/usage.js';
import type { ChatCompletionChunk } from '../protocol/chat.js';
import { nextStringValue, stringLiteralText } from '../lib/json-text-scan.js';
import { collectProducedText, pushText, type ProducedMessageFields } from './produced-text.js';

export interface StreamEnd {
  usage: Usage | undefined;
  /**
   * Text of the streamed choices (content, and function calls' names and arguments), for calls
   * whose upstream reported no usage at all.
   */
  text: string;
  error: unknown;
  /** The client stopped reading before the end; the rest was drained in the background. */
  abandoned: boolean;
}

export interface StreamMeterHooks {
  /** Prices the usage event; the result is set as `costUsd` on that event. */
  onUsage(usage: Usage): string;
  /**
   * The call's cost when it is known before the stream is read (a cache hit: 0). It is set on the
   * chunk that carries usage, or, when there is none, sent at the end as a cost-only event.
   */
  knownCostUsd?: string;
  /**
   * For a stream that ended without usage: the cost it will be charged, given the text it produced,
   * sent at the end as a cost-only event (so the trailer carries it); undefined when not charged.
   */
  costWithoutUsage?(text: string): string | undefined;
  /** Runs once, after the last event (awaited before the stream completes, unless abandoned). */
  onEnd(end: StreamEnd): Promise<void>;
  /** Bounds the background drain of an abandoned stream; then `abortUpstream` is called. */
  drainTimeoutMs: number;
  abortUpstream(): void;
}

function collectText(event: StreamEvent, parts: string[]): void {
  if (event.chunk) collectChunkText(event.chunk, parts);
  else if (event.raw !== undefined) collectRawText(event.raw, parts);
}

/** The produced text of a parsed chunk: each choice's delta (or a completion choice's text). */
function collectChunkText(chunk: ChatCompletionChunk, parts: string[]): void {
  for (const choice of chunk.choices ?? []) {
    collectProducedText(choice.delta as ProducedMessageFields | undefined, (choice as { text?: unknown }).text, parts);
  }
}

/** Keys whose string values are produced text: `content` of chat deltas, `text` of completion choices. */
const TEXT_KEYS = ['"content"', '"text"'] as const;

/**
 * Keys of a function call's produced text, billed as output tokens: its `name` and its `arguments`
 * fragments, in `delta.tool_calls[].function` and in the legacy `delta.function_call`. In OpenAI
 * chat chunks neither key occurs anywhere else, so matching the key alone is enough
 * (https://platform.openai.com/docs/api-reference/chat-streaming/streaming); keys inside the
 * arguments' own JSON are escaped (`\"name\"`) and never match.
 */
const FUNCTION_CALL_KEYS = ['"name"', '"arguments"'] as const;

/**
 * Begins `"function"`, `"function_call"` and the value `"function"` of a tool call's `type`; every
 * function call's keys come after one of them. A chunk without it holds no call, so content chunks
 * pay one search for it and no more.
 */
const FUNCTION_CALL_MARK = '"function';

/**
 * Appends the produced text of one chunk's JSON text without parsing the chunk: the string value
 * of every `"content"` and `"text"` key, and, when the chunk holds a function call, of every
 * `"name"` and `"arguments"` key after its start (lib/json-text-scan.ts; `logprobs.content`, an
 * array, is passed over). A value holding an escape (argument fragments nearly always do: `\"`) is
 * decoded by JSON.parse of that literal alone, so escaped quotes neither end a value early nor
 * count as text.
 * Cost per chunk read before usage arrives: three native substring searches over its text (two
 * more, from the call's start, in a chunk with a function call), a short scan to the closing quote
 * and one slice per value found; nothing is kept but the text.
 */
export function collectRawText(raw: string, parts: string[]): void {
  collectStringValues(raw, TEXT_KEYS, 0, parts);
  const callStart = raw.indexOf(FUNCTION_CALL_MARK);
  if (callStart !== -1) collectStringValues(raw, FUNCTION_CALL_KEYS, callStart, parts);
}

function collectStringValues(raw: string, quotedKeys: readonly string[], from: number, parts: string[]): void {
  for (const key of quotedKeys) {
    let span = nextStringValue(raw, key, from);
    while (span) {
      pushText(stringLiteralText(raw, span), parts);
      span = nextStringValue(raw, key, span.end);
    }
  }
}

/**
 * Passes a stream through unchanged except for `costUsd` on the usage event, and settles when it
 * ends. When the consumer stops early (the client left), the upstream keeps being read in the
 * background until its usage arrives, so what the upstream produced is billed exactly
 * (docs/money.md, "Streams"). The consumer must stop with `return()` — `for await … break` does.
 * Until usage arrives the produced text is gathered, for an upstream that never reports any.
 * A stream whose cost no event carried (a cache hit without a usage chunk, a stream without usage)
 * ends with a cost-only event, `{ costUsd }` without `raw` or `chunk`: the SSE writer sends no
 * event for it, only the cost trailer.
 */
export async function* meterStream(source: AsyncIterable<StreamEvent>, hooks: StreamMeterHooks): AsyncGenerator<StreamEvent> {
  const iterator = source[Symbol.asyncIterator]();
  let usage: Usage | undefined;
  const text: string[] = [];
  let costSent = false;
  let state: 'running' | 'done' | 'failed' = 'running';
  let failure: unknown;
  try {
    for (;;) {
      const step = await iterator.next();
      if (step.done) break;
      const event = step.value;
      if (event.usage) {
        usage = event.usage;
        event.costUsd = hooks.onUsage(event.usage);
        costSent = true;
      } else {
        if (usage === undefined) collectText(event, text);
        if (hooks.knownCostUsd !== undefined && event.chunk?.usage) {
          event.costUsd = hooks.knownCostUsd;
          costSent = true;
        }
      }
      yield event;
    }
    if (!costSent) {
      const costUsd = hooks.knownCostUsd ?? (usage === undefined ? hooks.costWithoutUsage?.(joinInPlace(text)) : undefined);
      if (costUsd !== undefined) yield { costUsd };
    }
    state = 'done';
  } catch (error) {
    state = 'failed';
    failure = error;
    throw error;
  } finally {
    if (state === 'running') {
      void drain(iterator, usage, text, hooks);
    } else {
      await hooks.onEnd({ usage, text: joinInPlace(text), error: failure, abandoned: false });
    }
  }
}

/** The parts as one string, left as the only part: joined once however often it is asked for. */
function joinInPlace(parts: string[]): string {
  if (parts.length === 1) return parts[0];
  const joined = parts.join('');
  parts.length = 0;
  parts.push(joined);
  return joined;
}

async function drain(iterator: AsyncIterator<StreamEvent>, seen: Usage | undefined, text: string[], hooks: StreamMeterHooks): Promise<void> {
  let usage = seen;
  let failure: unknown;
  const timer = setTimeout(() => hooks.abortUpstream(), hooks.drainTimeoutMs);
  timer.unref();
  try {
    for (;;) {
      const step = await iterator.next();
      if (step.done) break;
      if (step.value.usage) usage = step.value.usage;
      else if (usage === undefined) collectText(step.value, text);
    }
  } catch (error) {
    failure = error;
  } finally {
    clearTimeout(timer);
  }
  await hooks.onEnd({ usage, text: joinInPlace(text), error: usage ? undefined : failure, abandoned: true });
}
