import type { StreamEvent } from '../pipeline/stage.js';
import type { Usage } from '../protocol/usage.js';

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
  /** Runs once, after the last event (awaited before the stream completes, unless abandoned). */
  onEnd(end: StreamEnd): Promise<void>;
  /** Bounds the background drain of an abandoned stream; then `abortUpstream` is called. */
  drainTimeoutMs: number;
  abortUpstream(): void;
}

function collectText(event: StreamEvent, parts: string[]): void {
  const choices = event.chunk?.choices;
  if (!choices) return;
  for (const choice of choices) if (choice.delta.content) parts.push(choice.delta.content);
}

/**
 * Passes a stream through unchanged except for `costUsd` on the usage event, and settles when it
 * ends. When the consumer stops early (the client left), the upstream keeps being read in the
 * background until its usage arrives, so what the upstream produced is billed exactly
 * (docs/money.md, "Streams"). The consumer must stop with `return()` — `for await … break` does.
 */
export async function* meterStream(source: AsyncIterable<StreamEvent>, hooks: StreamMeterHooks): AsyncGenerator<StreamEvent> {
  const iterator = source[Symbol.asyncIterator]();
  let usage: Usage | undefined;
  const text: string[] = [];
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
      } else if (usage === undefined) {
        collectText(event, text);
      }
      yield event;
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
      await hooks.onEnd({ usage, text: text.join(''), error: failure, abandoned: false });
    }
  }
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
  await hooks.onEnd({ usage, text: text.join(''), error: usage ? undefined : failure, abandoned: true });
}
