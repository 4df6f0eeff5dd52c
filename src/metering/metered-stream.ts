import type { StreamEvent } from '../pipeline/stage.js';
import type { Usage } from '../protocol/usage.js';
import { nextStringValue } from '../lib/json-text-scan.js';

export interface StreamEnd {
  usage: Usage | undefined;
  /** Text of the streamed choices, for calls whose upstream reported no usage at all. */
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
  if (event.chunk) {
    for (const choice of event.chunk.choices ?? []) {
      const text = choice.delta?.content ?? (choice as { text?: unknown }).text;
      if (typeof text === 'string' && text.length > 0) parts.push(text);
    }
  } else if (event.raw !== undefined) {
    collectRawText(event.raw, parts);
  }
}

/** Keys whose string values are produced text: `content` of chat deltas, `text` of completion choices. */
const TEXT_KEYS = ['"content"', '"text"'] as const;

/**
 * Appends the produced text of one chunk's JSON text without parsing the chunk: the string value
 * of every `"content"` and `"text"` key (lib/json-text-scan.ts; `logprobs.content`, an array, is
 * passed over). Only a value holding an escape is decoded, by JSON.parse of that literal alone.
 * Cost per chunk read before usage arrives: two native substring searches over its text and a
 * slice per text found; nothing is kept but the text.
 */
export function collectRawText(raw: string, parts: string[]): void {
  for (const key of TEXT_KEYS) {
    let span = nextStringValue(raw, key);
    while (span) {
      const text = span.escaped ? decodeLiteral(raw.slice(span.start, span.end)) : raw.slice(span.start + 1, span.end - 1);
      if (text.length > 0) parts.push(text);
      span = nextStringValue(raw, key, span.end);
    }
  }
}

/** A JSON string literal's text; a malformed one (the upstream's fault) is counted as written. */
function decodeLiteral(literal: string): string {
  try {
    return JSON.parse(literal) as string;
  } catch {
    return literal.slice(1, -1);
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
