import { GatewayError, isGatewayError, type UpstreamAnswer } from '../errors/gateway-error.js';
import type { ChatCompletionChunk } from '../protocol/chat.js';
import type { Usage } from '../protocol/usage.js';
import type { GatewayCall, Next, Outcome, Stage, StreamEvent } from '../pipeline/stage.js';
import type { GuardrailStageDeps } from './input-guardrail-stage.js';
import { runGuardrails } from './run-guardrails.js';
import { runsNoGuardrails, selectGuardrails } from './select-guardrails.js';
import { addText, emptySlots, fieldsOf, listOf, replaceTexts, type TextPath, type TextSlots } from './text-slots.js';

type Check = (texts: string[]) => Promise<{ texts: string[]; changed: boolean }>;

/**
 * Post-call guardrails on chat answers: the content, refusal and function-call arguments of every
 * choice. A JSON answer is checked as is. A stream is buffered whole, its assembled texts checked,
 * then replayed (x-gw-stream-buffered: true), because once bytes reach the client they cannot be
 * taken back; without post-call guardrails streams pass through live. The upstream has answered
 * (and been paid) by then, so an error here carries that answer for the meter to charge.
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
    const checkAnswer = (usage: Usage | undefined): Check => async (texts) => {
      try {
        return await runGuardrails(guardrails, texts, call, 'post', deps);
      } catch (error) {
        throw withUpstreamAnswer(error, { usage, producedText: texts.join('') });
      }
    };
    if (outcome.kind === 'json') return checkJsonAnswer(outcome, checkAnswer(outcome.usage));
    if (outcome.kind !== 'stream') return outcome;
    call.record.headers['x-gw-stream-buffered'] = 'true';
    const buffered: StreamEvent[] = [];
    for await (const event of outcome.events) buffered.push(event);
    return checkBufferedStream(buffered, checkAnswer(buffered.findLast((event) => event.usage !== undefined)?.usage));
  }
}

/** The error, carrying what the upstream answered so that the meter charges it (docs/money.md). */
function withUpstreamAnswer(error: unknown, answer: UpstreamAnswer): unknown {
  if (!isGatewayError(error)) return error;
  return new GatewayError(error.code, error.message, {
    param: error.param,
    provider: error.provider,
    details: error.details,
    headers: error.headers,
    cause: error.cause,
    upstreamAnswer: answer,
  });
}

async function checkJsonAnswer(outcome: Extract<Outcome, { kind: 'json' }>, check: Check): Promise<Outcome> {
  const body = fieldsOf(outcome.body);
  if (!body || !Array.isArray(body.choices)) return outcome;
  const slots = answerTexts(body.choices);
  const result = await check(slots.texts);
  if (!result.changed) return outcome;
  // The raw upstream bytes no longer match the body, so they are dropped.
  const { raw: _raw, ...rest } = outcome;
  return { ...rest, body: replaceTexts(body, slots, result.texts) };
}

/** The texts of a JSON answer's choices: content, refusal, each function call's arguments. */
function answerTexts(choices: unknown[]): TextSlots {
  const slots = emptySlots();
  choices.forEach((choice, choiceIndex) => {
    const message = fieldsOf(fieldsOf(choice)?.message);
    if (!message) return;
    const at = ['choices', choiceIndex, 'message'];
    addText(slots, message.content, [...at, 'content']);
    addText(slots, message.refusal, [...at, 'refusal']);
    listOf(message.tool_calls).forEach((toolCall, callIndex) => {
      addText(slots, fieldsOf(fieldsOf(toolCall)?.function)?.arguments, [...at, 'tool_calls', callIndex, 'function', 'arguments']);
    });
    addText(slots, fieldsOf(message.function_call)?.arguments, [...at, 'function_call', 'arguments']);
  });
  return slots;
}

/** One fragment of a streamed text: which text it belongs to (per choice and field), and where it sits in its chunk. */
interface Fragment {
  text: string;
  key: string;
  path: TextPath;
}

/** The text fragments of one chunk; tool-call arguments are keyed by the tool call's `index`, as streams number them. */
function chunkFragments(chunk: ChatCompletionChunk | undefined): Fragment[] {
  const fragments: Fragment[] = [];
  const add = (text: unknown, key: string, path: TextPath) => {
    if (typeof text === 'string' && text.length > 0) fragments.push({ text, key, path });
  };
  listOf(chunk?.choices).forEach((entry, position) => {
    const choice = fieldsOf(entry);
    const delta = fieldsOf(choice?.delta);
    if (!delta) return;
    const index = typeof choice?.index === 'number' ? choice.index : position;
    const at = ['choices', position, 'delta'];
    add(delta.content, `${index}/content`, [...at, 'content']);
    add(delta.refusal, `${index}/refusal`, [...at, 'refusal']);
    listOf(delta.tool_calls).forEach((entry, callPosition) => {
      const toolCall = fieldsOf(entry);
      const callIndex = typeof toolCall?.index === 'number' ? toolCall.index : callPosition;
      add(fieldsOf(toolCall?.function)?.arguments, `${index}/tool/${callIndex}`, [...at, 'tool_calls', callPosition, 'function', 'arguments']);
    });
    add(fieldsOf(delta.function_call)?.arguments, `${index}/function_call`, [...at, 'function_call', 'arguments']);
  });
  return fragments;
}

async function checkBufferedStream(events: StreamEvent[], check: Check): Promise<Outcome> {
  const chunks = events.map((event) => (event.usageOnly ? undefined : parseChunk(event)));
  const fragments = chunks.map(chunkFragments);
  const assembled = new Map<string, string>();
  for (const fragment of fragments.flat()) assembled.set(fragment.key, (assembled.get(fragment.key) ?? '') + fragment.text);
  const keys = [...assembled.keys()];
  const result = await check(keys.map((key) => assembled.get(key)!));
  if (!result.changed) return { kind: 'stream', events: replay(events) };
  const replacement = new Map<string, string>();
  keys.forEach((key, position) => {
    if (result.texts[position] !== assembled.get(key)) replacement.set(key, result.texts[position]);
  });
  // A changed text goes out whole in its first fragment; its later fragments carry nothing.
  const written = new Set<string>();
  const rewritten = events.map((event, position) => {
    const changed = fragments[position].filter((fragment) => replacement.has(fragment.key));
    if (changed.length === 0) return event;
    const slots: TextSlots = { texts: changed.map((fragment) => fragment.text), paths: changed.map((fragment) => fragment.path) };
    const texts = changed.map((fragment) => {
      if (written.has(fragment.key)) return '';
      written.add(fragment.key);
      return replacement.get(fragment.key)!;
    });
    const { raw: _raw, ...rest } = event;
    return { ...rest, chunk: replaceTexts(chunks[position]!, slots, texts) };
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
