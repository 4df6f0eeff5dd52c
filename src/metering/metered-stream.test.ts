import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createMeterHarness, testAuth, testChatCall, type MeterHarness } from '../../test/helpers/meter-harness.js';
import type { Outcome, StreamEvent } from '../pipeline/stage.js';
import type { ChatCompletionChunk } from '../protocol/chat.js';
import { collectRawText, meterStream, type StreamEnd, type StreamMeterHooks } from './metered-stream.js';
import { createTokenCounter } from './token-counter.js';

test('the produced text is read from chunk text without parsing the chunk', () => {
  const parts: string[] = [];
  collectRawText('{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":{"content":[{"token":"Hello"}]}}]}', parts);
  collectRawText('{"choices": [{"delta": {"content": "say \\"hi\\"\\n"}}, {"delta": {"content": null}}]}', parts);
  collectRawText('{"choices":[{"delta":{"role":"assistant","content":""}}]}', parts);
  collectRawText('{"object":"text_completion","choices":[{"text":" once","index":0}]}', parts);
  // A key inside the arguments' own JSON is escaped: the arguments count once, whole, and "no" not apart.
  collectRawText('{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\\"content\\":\\"no\\"}"}}]}}]}', parts);
  collectRawText('{"choices":[{"delta":{"content":"bad \\q escape"}}]}', parts);
  assert.deepEqual(parts, ['Hello', 'say "hi"\n', ' once', '{"content":"no"}', 'bad \\q escape']);
});

function hooks(overrides: Partial<StreamMeterHooks> = {}): StreamMeterHooks & { ends: StreamEnd[] } {
  const ends: StreamEnd[] = [];
  return {
    ends,
    onUsage: () => '0.000000010',
    onEnd: async (end) => void ends.push(end),
    drainTimeoutMs: 1000,
    abortUpstream: () => {},
    ...overrides,
  };
}

async function* from(events: StreamEvent[]): AsyncGenerator<StreamEvent> {
  yield* events;
}

async function read(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const seen: StreamEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

test('a passed-through stream without usage gives its text to the settlement and ends with a cost-only event', async () => {
  const meter = hooks({ costWithoutUsage: (text) => (text === 'Hello world' ? '0.000000042' : undefined) });
  const seen = await read(
    meterStream(from([{ raw: '{"choices":[{"delta":{"content":"Hello"}}]}' }, { raw: '{"choices":[{"delta":{"content":" world"},"finish_reason":"stop"}]}' }]), meter),
  );
  assert.equal(seen.length, 3);
  assert.deepEqual(seen[2], { costUsd: '0.000000042' });
  assert.equal(meter.ends[0].text, 'Hello world');
  assert.equal(meter.ends[0].usage, undefined);
});

test('a stream failing midway still reports the text produced before it failed', async () => {
  const meter = hooks();
  async function* failing(): AsyncGenerator<StreamEvent> {
    yield { raw: '{"choices":[{"delta":{"content":"partial"}}]}' };
    throw new Error('upstream broke');
  }
  await assert.rejects(read(meterStream(failing(), meter)), /upstream broke/);
  assert.equal(meter.ends[0].text, 'partial');
  assert.ok(meter.ends[0].error instanceof Error);
});

test('a known cost (cache hit) goes on the usage chunk, or on a cost-only event when there is none', async () => {
  const usageChunk: StreamEvent = { chunk: { id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } } };
  const content: StreamEvent = { chunk: { id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: 'stop' }] } };
  const withUsage = await read(meterStream(from([content, usageChunk]), hooks({ knownCostUsd: '0.000000000' })));
  assert.equal(withUsage.length, 2);
  assert.equal(withUsage[1].costUsd, '0.000000000');

  const withoutUsage = await read(meterStream(from([{ ...content }]), hooks({ knownCostUsd: '0.000000000' })));
  assert.deepEqual(withoutUsage.at(-1), { costUsd: '0.000000000' });
});

/** A chat chunk's JSON text as an OpenAI-compatible upstream sends it (JSON.stringify escapes the fragments). */
function rawChunk(delta: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: null }], ...extra });
}

function toolCallDelta(fields: { index?: number; id?: string; name?: string; arguments: string }): Record<string, unknown> {
  const call: Record<string, unknown> = { index: fields.index ?? 0 };
  if (fields.id) Object.assign(call, { id: fields.id, type: 'function' });
  call.function = fields.name === undefined ? { arguments: fields.arguments } : { name: fields.name, arguments: fields.arguments };
  return { tool_calls: [call] };
}

/** How an OpenAI model streams one tool call: the name with empty arguments, then argument fragments. */
const WEATHER_ARGUMENTS = ['{"', 'location', '":"', 'Paris', ', France', '","', 'unit', '":"', 'celsius', '"}'];
const weatherCallEvents = (): StreamEvent[] => [
  { raw: rawChunk({ role: 'assistant', content: null, ...toolCallDelta({ id: 'call_1', name: 'get_weather', arguments: '' }) }) },
  ...WEATHER_ARGUMENTS.map((fragment) => ({ raw: rawChunk(toolCallDelta({ arguments: fragment })) })),
  { raw: JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }) },
];

test('tool-call names and argument fragments are read from chunk text, escapes decoded', () => {
  const parts: string[] = [];
  for (const event of weatherCallEvents()) collectRawText(event.raw!, parts);
  assert.equal(parts.join(''), `get_weather${WEATHER_ARGUMENTS.join('')}`);

  // Escaped quotes, an escaped backslash just before the closing quote, \uXXXX: each value ends at
  // its real closing quote, and the key after it is still found.
  const escaped: string[] = [];
  collectRawText('{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"q\\": \\"say \\\\\\"hi\\\\\\"\\"","name":"search"}}]}}]}', escaped);
  collectRawText('{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"C:\\\\"}}]}}]}', escaped);
  collectRawText('{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"caf\\u00e9\\"}"}}]}}]}', escaped);
  assert.deepEqual(escaped, ['search', '{"q": "say \\"hi\\""', 'C:\\', 'café"}']);

  // The legacy function_call delta.
  const legacy: string[] = [];
  collectRawText(rawChunk({ function_call: { name: 'lookup', arguments: '{"id": 7}' } }), legacy);
  assert.deepEqual(legacy, ['lookup', '{"id": 7}']);

  // A "name" outside any function call (a vendor field) is not produced text.
  const vendor: string[] = [];
  collectRawText(rawChunk({ content: 'hi' }, { provider: { name: 'upstream-x' } }), vendor);
  assert.deepEqual(vendor, ['hi']);
});

test('a stream with both content and tool calls gives all of it to the settlement', async () => {
  const meter = hooks();
  await read(
    meterStream(
      from([
        { raw: rawChunk({ role: 'assistant', content: 'Let me check. ' }) },
        { raw: rawChunk({ content: 'One moment.', ...toolCallDelta({ id: 'call_1', name: 'get_weather', arguments: '{"location":' }) }) },
        { raw: rawChunk(toolCallDelta({ arguments: '"Paris"}' })) },
        { raw: rawChunk(toolCallDelta({ index: 1, id: 'call_2', name: 'get_time', arguments: '{}' })) },
      ]),
      meter,
    ),
  );
  assert.equal(meter.ends[0].text, 'Let me check. One moment.get_weather{"location":"Paris"}get_time{}');
});

test('parsed-chunk events: content, tool calls and the legacy function_call are counted, values not strings are not', async () => {
  const chunk = (delta: Record<string, unknown>): StreamEvent => ({
    chunk: { id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] } as ChatCompletionChunk,
  });
  const meter = hooks();
  await read(
    meterStream(
      from([
        chunk({ role: 'assistant', content: 'Sure: ' }),
        chunk({ content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: 'say \\"hi\\""}' } }] }),
        chunk({ function_call: { name: 'lookup', arguments: '{}' } }),
        // An upstream's unvalidated JSON answered as a stream (answer-as-stream.ts) may hold anything.
        chunk({ tool_calls: [{ index: 1, function: { name: 7, arguments: { location: 'Paris' } } }, null] }),
        chunk({ tool_calls: 'not a list' }),
      ]),
      meter,
    ),
  );
  assert.equal(meter.ends[0].text, 'Sure: get_weather{"location":"say \\"hi\\""}lookup{}');
});

let harness: MeterHarness;
before(async () => {
  // 1 nano per input token, 10 per output token.
  harness = await createMeterHarness({ 'test-chat': { inputPerMillion: '0.001', outputPerMillion: '0.01' } });
});
after(() => harness.close());

test('a tool-call-only stream without usage is charged for the tokens of its name and arguments', async () => {
  const { stage, credits } = harness.setup();
  const context = testAuth();
  await credits.topUp(context.org.id, 1_000_000, null);
  const call = testChatCall(context, { overrides: { stream: true }, body: { max_tokens: 200 } });
  const outcome = (await stage.run(call, async () => ({ kind: 'stream', events: from(weatherCallEvents()) }))) as Extract<Outcome, { kind: 'stream' }>;
  const seen = await read(outcome.events);

  const tokens = createTokenCounter();
  const expected = tokens.count('get_weather') + tokens.count(WEATHER_ARGUMENTS.join(''));
  const outputTokens = call.record.usage?.outputTokens ?? 0;
  assert.ok(outputTokens > 0, 'not charged as zero output tokens');
  assert.ok(Math.abs(outputTokens - expected) <= 2, `${outputTokens} output tokens counted, about ${expected} expected`);
  assert.ok((call.record.costNanos ?? 0) >= outputTokens * 10);
  assert.equal(seen.at(-1)?.costUsd, call.record.headers['x-gw-request-cost'], 'the cost-only event carries the charge to the trailer');
  const balance = await credits.balance(context.org.id);
  assert.deepEqual([balance.spentNanos, balance.reservedNanos], [call.record.costNanos, 0]);
});
