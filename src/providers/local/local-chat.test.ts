import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encode } from 'gpt-tokenizer/encoding/cl100k_base';
import { createLocalProvider } from './create-local-provider.js';
import { localTestInvocation } from './local-test-invocation.js';
import type { ChatCompletion } from '../../protocol/chat.js';
import type { StreamEvent } from '../../pipeline/stage.js';
import { GatewayError } from '../../errors/gateway-error.js';

const provider = createLocalProvider({ now: () => 1_700_000_000_000 });

async function chat(request: Record<string, unknown>): Promise<ChatCompletion> {
  const outcome = await provider.invoke(localTestInvocation('chat', { model: 'local-chat', ...request }));
  assert.equal(outcome.kind, 'json');
  return (outcome as { body: ChatCompletion }).body;
}

async function collect(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const all: StreamEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

test('chat answers deterministically with real token usage', async () => {
  const request = { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'What is the capital of France?' }] };
  const first = await chat(request);
  const second = await chat(request);
  assert.deepEqual(first, second);
  assert.equal(first.id, 'chatcmpl-req_test');
  assert.equal(first.created, 1_700_000_000);
  assert.equal(first.model, 'local-chat');
  const content = first.choices[0].message.content ?? '';
  assert.match(content, /^Local reply to: What is the capital of France\?/);
  assert.equal(first.choices[0].finish_reason, 'stop');
  assert.equal(first.usage?.completion_tokens, encode(content).length);
  assert.ok((first.usage?.prompt_tokens ?? 0) > encode('What is the capital of France?').length);
  assert.equal(first.usage?.total_tokens, (first.usage?.prompt_tokens ?? 0) + (first.usage?.completion_tokens ?? 0));
});

test('max_tokens cuts the answer with finish_reason length', async () => {
  const body = await chat({ messages: [{ role: 'user', content: 'Tell me a long story' }], max_tokens: 3 });
  assert.equal(body.choices[0].finish_reason, 'length');
  assert.equal(body.usage?.completion_tokens, 3);
  assert.equal(encode(body.choices[0].message.content ?? '').length, 3);
  const newer = await chat({ messages: [{ role: 'user', content: 'Tell me a long story' }], max_completion_tokens: 2 });
  assert.equal(newer.usage?.completion_tokens, 2);
});

test('stop sequences end the answer before the sequence', async () => {
  const body = await chat({ messages: [{ role: 'user', content: 'alpha beta gamma' }], stop: ['beta', 'zzz'] });
  assert.equal(body.choices[0].message.content, 'Local reply to: alpha ');
  assert.equal(body.choices[0].finish_reason, 'stop');
});

test('n gives n choices', async () => {
  const body = await chat({ messages: [{ role: 'user', content: 'hi' }], n: 3 });
  assert.deepEqual(body.choices.map((choice) => choice.index), [0, 1, 2]);
});

test('json_object mode answers valid JSON', async () => {
  const body = await chat({ messages: [{ role: 'user', content: 'give json' }], response_format: { type: 'json_object' } });
  const parsed = JSON.parse(body.choices[0].message.content ?? '') as { reply: string };
  assert.match(parsed.reply, /give json/);
});

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } }, required: ['city', 'unit'] },
  },
};
const otherTool = { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } };

test('tools: a user turn gets a tool call; a tool result gets text; none disables', async () => {
  const called = await chat({ messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weatherTool, otherTool] });
  const toolCall = called.choices[0].message.tool_calls?.[0];
  assert.equal(called.choices[0].finish_reason, 'tool_calls');
  assert.equal(called.choices[0].message.content, null);
  assert.equal(toolCall?.function.name, 'get_weather');
  assert.deepEqual(JSON.parse(toolCall?.function.arguments ?? ''), { city: 'Weather in Paris?', unit: 'c' });

  const named = await chat({
    messages: [{ role: 'user', content: 'time?' }],
    tools: [weatherTool, otherTool],
    tool_choice: { type: 'function', function: { name: 'get_time' } },
  });
  assert.equal(named.choices[0].message.tool_calls?.[0].function.name, 'get_time');

  const answered = await chat({
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: toolCall?.id, type: 'function', function: toolCall?.function }] },
      { role: 'tool', tool_call_id: toolCall?.id, content: '21 degrees' },
    ],
    tools: [weatherTool],
  });
  assert.equal(answered.choices[0].finish_reason, 'stop');
  assert.match(answered.choices[0].message.content ?? '', /tool result: 21 degrees/);

  const none = await chat({ messages: [{ role: 'user', content: 'hi' }], tools: [weatherTool], tool_choice: 'none' });
  assert.equal(none.choices[0].finish_reason, 'stop');

  await assert.rejects(
    chat({ messages: [{ role: 'user', content: 'x' }], tools: [weatherTool], tool_choice: { type: 'function', function: { name: 'nope' } } }),
    (error: unknown) => error instanceof GatewayError && error.code === 'invalid_request',
  );
});

test('stream: role chunk, token chunks, finish chunk, usage-only chunk', async () => {
  const invocation = localTestInvocation('chat', { model: 'local-chat', messages: [{ role: 'user', content: 'stream me' }] }, { stream: true });
  const outcome = await provider.invoke(invocation);
  assert.equal(outcome.kind, 'stream');
  const events = await collect((outcome as { events: AsyncIterable<StreamEvent> }).events);
  const nonStream = await chat({ messages: [{ role: 'user', content: 'stream me' }] });
  assert.deepEqual(events[0].chunk?.choices[0].delta, { role: 'assistant', content: '' });
  const text = events.map((event) => event.chunk?.choices[0]?.delta.content ?? '').join('');
  assert.equal(text, nonStream.choices[0].message.content);
  const finish = events[events.length - 2];
  assert.equal(finish.chunk?.choices[0].finish_reason, 'stop');
  const last = events[events.length - 1];
  assert.equal(last.usageOnly, true);
  assert.deepEqual(last.chunk?.choices, []);
  assert.deepEqual(last.chunk?.usage, nonStream.usage);
  assert.equal(last.usage?.outputTokens, nonStream.usage?.completion_tokens);
  assert.ok(events.length > 5, 'one chunk per token');
  for (const event of events) assert.equal(event.chunk?.id, 'chatcmpl-req_test');
});

test('stream stops when the signal aborts', async () => {
  const controller = new AbortController();
  const invocation = localTestInvocation(
    'chat',
    { model: 'local-chat', messages: [{ role: 'user', content: 'a fairly long message to stream slowly' }] },
    { stream: true, signal: controller.signal },
  );
  const outcome = await provider.invoke(invocation);
  const iterator = (outcome as { events: AsyncIterable<StreamEvent> }).events[Symbol.asyncIterator]();
  await iterator.next();
  await iterator.next();
  controller.abort(new Error('client left'));
  await assert.rejects(iterator.next(), /client left/);
  assert.equal((await iterator.next()).done, true);
});

test('markers simulate upstream failures and abortable delays', async () => {
  const cases: Array<[number, string]> = [
    [503, 'upstream_unavailable'],
    [429, 'upstream_rate_limited'],
    [500, 'upstream_bad_response'],
    [504, 'upstream_timeout'],
  ];
  for (const [status, code] of cases) {
    await assert.rejects(
      chat({ messages: [{ role: 'user', content: `please [local:fail:${status}]` }] }),
      (error: unknown) => error instanceof GatewayError && error.code === code && error.provider === 'local',
    );
  }
  const controller = new AbortController();
  const pending = provider.invoke(
    localTestInvocation('chat', { model: 'local-chat', messages: [{ role: 'user', content: '[local:sleep:60000] hi' }] }, { signal: controller.signal }),
  );
  controller.abort(new Error('timed out'));
  await assert.rejects(pending, /timed out/);
  const slept = await chat({ messages: [{ role: 'user', content: '[local:sleep:5] hi' }] });
  assert.equal(slept.choices[0].message.content?.startsWith('Local reply to: hi'), true);
});

test('completions: default 16 tokens, prompt arrays, stream as raw text_completion chunks', async () => {
  const outcome = await provider.invoke(localTestInvocation('completion', { model: 'local-chat', prompt: 'Once upon a time' }));
  assert.equal(outcome.kind, 'json');
  const body = (outcome as { body: { choices: Array<{ text: string; finish_reason: string }>; usage: { completion_tokens: number; prompt_tokens: number } } }).body;
  assert.equal(body.usage.completion_tokens, 16);
  assert.equal(body.usage.prompt_tokens, encode('Once upon a time').length);
  assert.equal(body.choices[0].finish_reason, 'length');

  const many = await provider.invoke(localTestInvocation('completion', { model: 'local-chat', prompt: ['a', 'b'], n: 2, max_tokens: 100 }));
  const manyBody = (many as { body: { choices: Array<{ index: number; finish_reason: string }> } }).body;
  assert.equal(manyBody.choices.length, 4);
  assert.equal(manyBody.choices[0].finish_reason, 'stop');

  const streamed = await provider.invoke(
    localTestInvocation('completion', { model: 'local-chat', prompt: 'Once upon a time' }, { stream: true }),
  );
  const events = await collect((streamed as { events: AsyncIterable<StreamEvent> }).events);
  const parsed = events.map((event) => JSON.parse(event.raw ?? '{}') as { object: string; choices: Array<{ text: string }> });
  assert.ok(parsed.every((chunk) => chunk.object === 'text_completion'));
  assert.equal(parsed.map((chunk) => chunk.choices[0]?.text ?? '').join(''), body.choices[0].text);
  assert.equal(events[events.length - 1].usageOnly, true);
  assert.equal(events[events.length - 1].usage?.outputTokens, 16);
});
