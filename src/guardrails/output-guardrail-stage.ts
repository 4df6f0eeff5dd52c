import type { ChatCompletion, ChatCompletionChunk } from '../protocol/chat.js';
import type { GatewayCall, Next, Outcome, Stage, StreamEvent } from '../pipeline/stage.js';
import type { GuardrailStageDeps } from './input-guardrail-stage.js';
import { runGuardrails } from './run-guardrails.js';
import { runsNoGuardrails, selectGuardrails } from './select-guardrails.js';

/**
 * Post-call guardrails on chat answers. A JSON answer is checked as is. A stream is buffered whole,
 * its assembled text checked, then replayed (x-gw-stream-buffered: true), because once bytes reach
 * the client they cannot be taken back; without post-call guardrails streams pass through live.
 */
export function createOutputGuardrailStage(deps: GuardrailStageDeps): Stage {
  return {
    name: 'outputGuardrails',
    run(call, next) {
      if (call.operation !== 'chat' || runsNoGuardrails(deps.store, call, 'post')) return next(call);
      return checkOutput(call, next);
    },
  };

  async function checkOutput(call: GatewayCall, next: Next): Promise<Outcome> {
    const guardrails = await selectGuardrails(deps.store, call, 'post');
    if (guardrails.length === 0) return next(call);
    call.record.headers['x-gw-post-call-guardrails'] = guardrails.map((guardrail) => guardrail.name).join(',');
    const outcome = await next(call);
    if (outcome.kind === 'json') {
      const body = outcome.body as ChatCompletion;
      if (!Array.isArray(body?.choices)) return outcome;
      const texts = body.choices.map((choice) => choice.message?.content ?? '');
      const result = await runGuardrails(guardrails, texts, call, 'post', deps);
      if (!result.changed) return outcome;
      const choices = body.choices.map((choice, index) =>
        choice.message?.content == null ? choice : { ...choice, message: { ...choice.message, content: result.texts[index] } },
      );
      // The raw upstream bytes no longer match the body, so they are dropped.
      const { raw: _raw, ...rest } = outcome;
      return { ...rest, body: { ...body, choices } };
    }
    if (outcome.kind !== 'stream') return outcome;
    call.record.headers['x-gw-stream-buffered'] = 'true';
    const buffered: StreamEvent[] = [];
    for await (const event of outcome.events) buffered.push(event);
    return checkBufferedStream(buffered, async (texts) => runGuardrails(guardrails, texts, call, 'post', deps));
  }
}

async function checkBufferedStream(
  events: StreamEvent[],
  check: (texts: string[]) => Promise<{ texts: string[]; changed: boolean }>,
): Promise<Outcome> {
  const chunks = events.map((event) => (event.usageOnly ? undefined : parseChunk(event)));
  const textByChoice = new Map<number, string>();
  for (const chunk of chunks) {
    for (const choice of chunk?.choices ?? []) {
      const content = choice.delta?.content;
      if (typeof content === 'string') textByChoice.set(choice.index, (textByChoice.get(choice.index) ?? '') + content);
    }
  }
  const indexes = [...textByChoice.keys()].sort((left, right) => left - right);
  const result = await check(indexes.map((index) => textByChoice.get(index) ?? ''));
  if (!result.changed) return { kind: 'stream', events: replay(events) };
  const replacement = new Map(indexes.map((index, position) => [index, result.texts[position]]));
  const written = new Set<number>();
  const rewritten = events.map((event, position) => {
    const chunk = chunks[position];
    if (!chunk || !chunk.choices.some((choice) => typeof choice.delta?.content === 'string')) return event;
    // The whole redacted text goes out with the choice's first content delta; later deltas carry nothing.
    const choices = chunk.choices.map((choice) => {
      if (typeof choice.delta?.content !== 'string') return choice;
      const content = written.has(choice.index) ? '' : (replacement.get(choice.index) ?? '');
      written.add(choice.index);
      return { ...choice, delta: { ...choice.delta, content } };
    });
    const { raw: _raw, ...rest } = event;
    return { ...rest, chunk: { ...chunk, choices } };
  });
  return { kind: 'stream', events: replay(rewritten) };
}

function parseChunk(event: StreamEvent): ChatCompletionChunk | undefined {
  if (event.chunk) return event.chunk;
  if (event.raw === undefined) return undefined;
  try {
    return JSON.parse(event.raw) as ChatCompletionChunk;
  } catch {
    return undefined;
  }
}

async function* replay(events: StreamEvent[]): AsyncGenerator<StreamEvent> {
  yield* events;
}
