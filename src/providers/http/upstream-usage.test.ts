import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testTarget } from '../../../test/fakes/fixture-files.js';
import { CallAbort } from '../../lib/call-signal.js';
import type { GatewayCall, Outcome, StreamEvent } from '../../pipeline/stage.js';
import type { Usage } from '../../protocol/usage.js';
import { createCompatibleAdapter } from '../compatible/compatible-adapter.js';
import { findCompatiblePreset } from '../openai/presets.js';
import { createHttpProvider, type RejectedUsage } from './create-http-provider.js';
import type { UpstreamClient } from './upstream-client.js';
import { acceptUpstreamUsage, MAX_UPSTREAM_UNITS_PER_CALL } from './upstream-usage.js';

function accept(usage: Usage): { usage: Usage | undefined; problems: string[] } {
  const problems: string[] = [];
  return { usage: acceptUpstreamUsage(usage, (problem) => problems.push(problem)), problems };
}

test('a well-formed usage is accepted as the same object, without a copy', () => {
  const usage: Usage = { inputTokens: 10, outputTokens: 3, images: [{ size: '1024x1024', quality: 'high', count: 1 }], transcriptionSeconds: 1.25 };
  const result = accept(usage);
  assert.equal(result.usage, usage);
  assert.deepEqual(result.problems, []);
});

test('a fractional count is rounded up to the next whole unit; durations keep their fraction', () => {
  const usage: Usage = { inputTokens: 10.5, outputTokens: 2.01, images: [{ size: '1024x1024', quality: 'high', count: 1.5 }], videoSeconds: 2.5 };
  const result = accept(usage);
  assert.deepEqual(result.usage, { inputTokens: 11, outputTokens: 3, images: [{ size: '1024x1024', quality: 'high', count: 2 }], videoSeconds: 2.5 });
  assert.deepEqual(usage.inputTokens, 10.5, 'the upstream usage itself is left as it was');
  assert.deepEqual(result.problems, []);
});

test('a count that is not a finite number, negative or above the per-call bound rejects the whole usage', () => {
  const bad: Array<[Usage, RegExp]> = [
    [{ inputTokens: 1e15, outputTokens: 1e15 }, /inputTokens is above 1000000000/],
    [{ inputTokens: 5, outputTokens: MAX_UPSTREAM_UNITS_PER_CALL + 0.5 }, /outputTokens is above/],
    [{ inputTokens: -1, outputTokens: 3 }, /inputTokens is negative/],
    [{ inputTokens: Number.NaN }, /not a finite number/],
    [{ inputTokens: Number.POSITIVE_INFINITY }, /not a finite number/],
    [{ inputTokens: '12' as unknown as number }, /not a finite number/],
    [{ transcriptionSeconds: -2 }, /transcriptionSeconds is negative/],
    [{ images: [{ size: 'x', quality: 'y', count: 1e12 }] }, /images.count is above/],
    [{ inputTokens: 1, reportedCostNanos: 0.5 }, /reportedCostNanos/],
    [{ inputTokens: 1, reportedCostNanos: 2 ** 60 }, /reportedCostNanos/],
  ];
  for (const [usage, expected] of bad) {
    const result = accept(usage);
    assert.equal(result.usage, undefined, JSON.stringify(usage));
    assert.equal(result.problems.length, 1);
    assert.match(result.problems[0], expected);
  }
  assert.deepEqual(accept({ inputTokens: MAX_UPSTREAM_UNITS_PER_CALL }).problems, [], 'the bound itself is accepted');
});

/** The OpenAI preset's provider in front of an upstream that answers every call with `answer`, JSON or SSE. */
function providerAnswering(answer: { json?: unknown; sse?: string[] }, rejected: RejectedUsage[]) {
  const client: UpstreamClient = {
    send: async () => {
      const chunks = (answer.sse ?? []).map((text) => Buffer.from(text));
      let destroyed = false;
      return {
        statusCode: 200,
        headers: { 'content-type': 'text/event-stream' },
        body: {
          async *[Symbol.asyncIterator]() {
            yield* chunks;
          },
          readAll: async () => Buffer.concat(chunks),
          destroy: () => void (destroyed = true),
          get destroyed() {
            return destroyed;
          },
        },
      };
    },
    sendBuffered: async () => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(answer.json)) }),
    close: async () => {},
  };
  return createHttpProvider(createCompatibleAdapter(findCompatiblePreset('openai')!), client, {}, { onUsageRejected: (entry) => void rejected.push(entry) });
}

function invoke(provider: ReturnType<typeof providerAnswering>, stream: boolean): Promise<Outcome> {
  const call = {
    requestId: 'req-usage',
    operation: 'chat',
    model: 'gpt-public',
    request: { model: 'gpt-public', messages: [{ role: 'user', content: 'hi' }] },
    stream,
  } as unknown as GatewayCall;
  return provider.invoke({ call, target: testTarget({ provider: 'openai', upstreamModel: 'gpt-4o' }), signal: new CallAbort().signal });
}

const answerWith = (usage: unknown) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
  usage,
});

test('an absurd usage from an upstream reaches nobody as usage: the answer is kept, the rejection is reported', async () => {
  const rejected: RejectedUsage[] = [];
  const outcome = await invoke(providerAnswering({ json: answerWith({ prompt_tokens: 1e15, completion_tokens: 1e15, total_tokens: 2e15 }) }, rejected), false);
  assert.equal(outcome.kind, 'json');
  if (outcome.kind !== 'json') return;
  assert.equal(outcome.usage, undefined);
  assert.deepEqual((outcome.body as { choices: unknown[] }).choices.length, 1);
  assert.equal(rejected.length, 1);
  assert.deepEqual({ ...rejected[0], problem: undefined }, { provider: 'openai', deploymentId: 'dep-1', requestId: 'req-usage', problem: undefined });
  assert.match(rejected[0].problem, /inputTokens is above/);
});

test('a negative prompt_tokens is rejected, not billed as zero', async () => {
  const rejected: RejectedUsage[] = [];
  const outcome = await invoke(providerAnswering({ json: answerWith({ prompt_tokens: -500, completion_tokens: 3, total_tokens: -497 }) }, rejected), false);
  assert.equal(outcome.kind === 'json' && outcome.usage, undefined);
  assert.match(rejected[0]?.problem ?? '', /inputTokens is negative/);
});

test('a fractional prompt_tokens is billed rounded up', async () => {
  const rejected: RejectedUsage[] = [];
  const outcome = await invoke(providerAnswering({ json: answerWith({ prompt_tokens: 10.5, completion_tokens: 3, total_tokens: 13.5 }) }, rejected), false);
  assert.deepEqual(outcome.kind === 'json' && outcome.usage, { inputTokens: 11, outputTokens: 3 });
  assert.deepEqual(rejected, []);
});

test('a stream whose usage chunk is absurd is passed through with no usage for metering', async () => {
  const rejected: RejectedUsage[] = [];
  const chunk = (body: unknown) => `data: ${JSON.stringify(body)}\n\n`;
  const sse = [
    chunk({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'hi' } }] }),
    chunk({ id: 'c', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 1e15, completion_tokens: 1, total_tokens: 1e15 + 1 } }),
    'data: [DONE]\n\n',
  ];
  const outcome = await invoke(providerAnswering({ sse }, rejected), true);
  assert.equal(outcome.kind, 'stream');
  if (outcome.kind !== 'stream') return;
  const events: StreamEvent[] = [];
  for await (const event of outcome.events) events.push(event);
  assert.equal(events.length, 2);
  assert.ok(events.every((event) => event.usage === undefined));
  assert.match(events[1].raw ?? '', /"prompt_tokens":1000000000000000/, 'the client still sees what the upstream said');
  assert.equal(rejected.length, 1);
});
