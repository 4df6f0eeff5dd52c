import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { StreamEvent } from '../pipeline/stage.js';
import { collectRawText, meterStream, type StreamEnd, type StreamMeterHooks } from './metered-stream.js';

test('the produced text is read from chunk text without parsing the chunk', () => {
  const parts: string[] = [];
  collectRawText('{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":{"content":[{"token":"Hello"}]}}]}', parts);
  collectRawText('{"choices": [{"delta": {"content": "say \\"hi\\"\\n"}}, {"delta": {"content": null}}]}', parts);
  collectRawText('{"choices":[{"delta":{"role":"assistant","content":""}}]}', parts);
  collectRawText('{"object":"text_completion","choices":[{"text":" once","index":0}]}', parts);
  collectRawText('{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\\"content\\":\\"no\\"}"}}]}}]}', parts);
  collectRawText('{"choices":[{"delta":{"content":"bad \\q escape"}}]}', parts);
  assert.deepEqual(parts, ['Hello', 'say "hi"\n', ' once', 'bad \\q escape']);
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
