import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayError } from '../errors/gateway-error.js';
import { createEventBus, type GatewayEvent } from '../lib/event-bus.js';
import type { GatewayCall, Outcome, StreamEvent } from '../pipeline/stage.js';
import { chatCompletion, collect, fakeCall, rawStream, streamText } from '../../test/features/fake-gateway-call.js';
import type { Guardrail } from './guardrail-types.js';
import { createInputGuardrailStage } from './input-guardrail-stage.js';
import { createOutputGuardrailStage } from './output-guardrail-stage.js';
import type { GuardrailLogEntry } from './sql-guardrail-store.js';
import { parseJsonBody } from '../http/json-body.js';
import { jsonTextOf } from '../lib/json-source-text.js';

function guardrail(overrides: Partial<Guardrail>): Guardrail {
  return { id: crypto.randomUUID(), orgId: 'org-test', name: 'g', kind: 'pii', stage: 'pre', action: 'block', enabledByDefault: true, config: {}, createdAt: 0, updatedAt: 0, ...overrides };
}

function setup(guardrails: Guardrail[], post?: (url: string, body: unknown) => Promise<{ status: number; body: unknown }>) {
  const logs: GuardrailLogEntry[] = [];
  const events: GatewayEvent[] = [];
  const eventBus = createEventBus();
  eventBus.subscribe((event) => events.push(event));
  const warnings: Array<{ context: Record<string, unknown>; message: string }> = [];
  const deps = {
    store: { list: async () => guardrails },
    eventBus,
    logWriter: { add: (entry: GuardrailLogEntry) => void logs.push(entry) },
    post,
    warn: (context: Record<string, unknown>, message: string) => void warnings.push({ context, message }),
  };
  return { input: createInputGuardrailStage(deps), output: createOutputGuardrailStage(deps), logs, events, warnings };
}

const userSays = (content: unknown, extra: Record<string, unknown> = {}) => fakeCall({ request: { model: 'm', messages: [{ role: 'user', content }], ...extra } });

test('a block throws guardrail_blocked naming the guardrail, before next runs, and is logged and published', async () => {
  const pii = guardrail({ name: 'no-pii' });
  const { input, logs, events } = setup([pii]);
  let reached = false;
  await assert.rejects(
    input.run(userSays('mail bob@example.com'), async () => {
      reached = true;
      return { kind: 'json', body: {} };
    }),
    (error: unknown) => error instanceof GatewayError && error.code === 'guardrail_blocked' && error.message.includes('no-pii') && error.details?.guardrail_id === pii.id,
  );
  assert.equal(reached, false);
  assert.equal(logs[0].action, 'blocked');
  assert.deepEqual(logs[0].findingTypes, ['email']);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(events[0].kind, 'guardrail.triggered');
  assert.equal(events[0].details.guardrail_name, 'no-pii');
});

test("a body the pre-call guardrails passed goes upstream encoded from what they checked, not as the client's text", async () => {
  const { input } = setup([guardrail({ name: 'pii', action: 'redact' })]);
  const request = parseJsonBody('{"model":"m","messages":[{"role":"user","content":"nothing to hide"}]}') as Record<string, unknown>;
  assert.notEqual(jsonTextOf(request), undefined);
  let seen: GatewayCall | undefined;
  await input.run(fakeCall({ request }), async (next) => {
    seen = next;
    return { kind: 'json', body: {} };
  });
  assert.equal(seen?.request, request);
  assert.equal(jsonTextOf(request), undefined);
});

test('redaction rewrites string and text-part contents, chained across guardrails', async () => {
  const { input } = setup([guardrail({ name: 'pii', action: 'redact' }), guardrail({ name: 'secrets', kind: 'secrets', action: 'redact' })]);
  let seen: GatewayCall | undefined;
  const call = userSays([{ type: 'text', text: 'me: bob@example.com key sk-proj-abcdefghijklmnopqrstuvwxyz0123' }, { type: 'image_url', image_url: { url: 'x' } }]);
  await input.run(call, async (next) => {
    seen = next;
    return { kind: 'json', body: {} };
  });
  const parts = (seen!.request as any).messages[0].content;
  assert.equal(parts[0].text, 'me: [REDACTED_EMAIL] key [REDACTED_OPENAI_KEY]');
  assert.deepEqual(parts[1], { type: 'image_url', image_url: { url: 'x' } });
  assert.equal((call.request as any).messages[0].content[0].text.includes('bob@'), true, 'the original call is not mutated');
  assert.equal(call.record.headers['x-gw-guardrails-applied'], 'pii,secrets');
});

test('gw_guardrail_ids runs exactly those; an unknown id is a 400', async () => {
  const enabled = guardrail({ name: 'enabled' });
  const optIn = guardrail({ name: 'opt-in', enabledByDefault: false, kind: 'deny_list', config: { terms: ['zebra'] } });
  const { input } = setup([enabled, optIn]);
  const call = userSays('bob@example.com', { gw_guardrail_ids: [optIn.id] });
  await input.run(call, async () => ({ kind: 'json', body: {} }));
  assert.equal(call.record.headers['x-gw-guardrails-applied'], 'opt-in');
  await assert.rejects(input.run(userSays('x', { gw_guardrail_ids: [crypto.randomUUID()] }), async () => ({ kind: 'json', body: {} })), (error: unknown) => error instanceof GatewayError && error.code === 'invalid_request');
});

test('webhook guardrails follow the answer, and fail closed when unreachable', async () => {
  const hook = guardrail({ name: 'hook', kind: 'webhook', config: { url: 'https://policy.example/check' } });
  const allow = setup([hook], async () => ({ status: 200, body: { action: 'allow' } }));
  await allow.input.run(userSays('anything'), async () => ({ kind: 'json', body: {} }));
  const block = setup([hook], async () => ({ status: 200, body: { action: 'block', reason: 'policy' } }));
  await assert.rejects(block.input.run(userSays('anything'), async () => ({ kind: 'json', body: {} })), /policy/);
  const down = setup([hook], async () => {
    throw new Error('connect ECONNREFUSED 10.0.0.1');
  });
  await assert.rejects(down.input.run(userSays('anything'), async () => ({ kind: 'json', body: {} })), (error: unknown) => error instanceof GatewayError && !error.message.includes('10.0.0.1'));
  const open = setup([guardrail({ ...hook, config: { ...hook.config, fail_open: true } })]);
  await open.input.run(userSays('anything'), async () => ({ kind: 'json', body: {} }));
});

test('post-call guardrails redact JSON answers and drop the raw bytes', async () => {
  const { output } = setup([guardrail({ name: 'out', stage: 'post', action: 'redact' })]);
  const call = userSays('hi');
  const outcome = await output.run(call, async () => ({ kind: 'json', body: chatCompletion('reach me at bob@example.com'), raw: Buffer.from('{}') }));
  assert.equal(outcome.kind === 'json' && (outcome.body as any).choices[0].message.content, 'reach me at [REDACTED_EMAIL]');
  assert.equal(outcome.kind === 'json' && outcome.raw, undefined);
  assert.equal(call.record.headers['x-gw-post-call-guardrails'], 'out');
});

test('post-call guardrails buffer a stream, check the assembled text, and replay it redacted', async () => {
  const { output } = setup([guardrail({ name: 'out', stage: 'post', action: 'redact' })]);
  const call = userSays('hi', { stream: true });
  // The address is split across chunks: only the assembled text shows it.
  const events = await collect(await output.run(call, async () => rawStream(['mail bob@exa', 'mple.com', ' now'])));
  assert.equal(call.record.headers['x-gw-stream-buffered'], 'true');
  assert.equal(streamText(events), 'mail [REDACTED_EMAIL] now');
  assert.equal(events.at(-1)!.usageOnly, true, 'usage-only events pass through untouched');
  assert.ok(events.at(-1)!.raw);

  const blocking = setup([guardrail({ name: 'out-block', stage: 'post' })]);
  await assert.rejects(blocking.output.run(userSays('hi', { stream: true }), async () => rawStream(['bob@', 'example.com'])), GatewayError);
});

test('without post-call guardrails the stream is passed through untouched', async () => {
  const { output } = setup([guardrail({ name: 'pre-only' })]);
  const call = userSays('hi', { stream: true });
  const upstream: Outcome = rawStream(['a']);
  assert.equal(await output.run(call, async () => upstream), upstream);
  assert.equal(call.record.headers['x-gw-stream-buffered'], undefined);
});

const CARD = '4111 1111 1111 1111';
const passes = async () => ({ kind: 'json', body: {} }) as Outcome;
const isBlock = (error: unknown) => error instanceof GatewayError && error.code === 'guardrail_blocked';

test('pre-call: function-call arguments, tool definitions and message names are checked, not only content', async () => {
  const { input } = setup([guardrail({ name: 'no-pii' })]);
  const toolCallTurn = (args: string) => [
    { role: 'user', content: 'pay it' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'pay', arguments: args } }] },
    { role: 'tool', tool_call_id: 'c1', content: 'ok' },
  ];
  const tool = (fn: Record<string, unknown>) => [{ type: 'function', function: { name: 'pay', ...fn } }];
  const blocked = [
    { messages: toolCallTurn(JSON.stringify({ card: CARD })) },
    { messages: [{ role: 'assistant', content: null, function_call: { name: 'pay', arguments: `{"card":"${CARD}"}` } }] },
    { messages: [{ role: 'user', content: 'hi' }], tools: tool({ description: `charges ${CARD}` }) },
    { messages: [{ role: 'user', content: 'hi' }], tools: tool({ parameters: { type: 'object', properties: { card: { type: 'string', description: `e.g. ${CARD}` } } } }) },
    { messages: [{ role: 'user', content: 'hi' }], tools: tool({ parameters: { type: 'object', properties: { to: { type: 'string', enum: ['bob@example.com'] } } } }) },
    { messages: [{ role: 'user', content: 'hi' }], functions: [{ name: 'pay', description: `charges ${CARD}` }] },
    { messages: [{ role: 'user', name: 'bob@example.com', content: 'hi' }] },
    { messages: [{ role: 'assistant', content: [{ type: 'refusal', refusal: `not ${CARD}` }] }] },
  ];
  for (const request of blocked) {
    await assert.rejects(input.run(fakeCall({ request: { model: 'm', ...request } }), passes), isBlock, JSON.stringify(request));
  }
  await input.run(fakeCall({ request: { model: 'm', messages: toolCallTurn('{"card":"none"}'), tools: tool({ description: 'pays' }) } }), passes);
});

test('pre-call redaction inside function-call arguments and tool schemas: the arguments stay a JSON string', async () => {
  const { input } = setup([guardrail({ name: 'pii', action: 'redact' })]);
  let seen: GatewayCall | undefined;
  const call = fakeCall({
    request: {
      model: 'm',
      messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'mail', arguments: '{"to":"bob@example.com","n":1}' } }] }],
      tools: [{ type: 'function', function: { name: 'mail', description: 'mail bob@example.com', parameters: { type: 'object', properties: { to: { type: 'string', default: 'bob@example.com' } } } } }],
    },
  });
  await input.run(call, async (next) => {
    seen = next;
    return { kind: 'json', body: {} };
  });
  const request = seen!.request as any;
  const args = request.messages[0].tool_calls[0].function.arguments;
  assert.equal(args, '{"to":"[REDACTED_EMAIL]","n":1}');
  assert.deepEqual(JSON.parse(args), { to: '[REDACTED_EMAIL]', n: 1 });
  assert.equal(request.tools[0].function.description, 'mail [REDACTED_EMAIL]');
  assert.deepEqual(request.tools[0].function.parameters, { type: 'object', properties: { to: { type: 'string', default: '[REDACTED_EMAIL]' } } });
  assert.ok(JSON.stringify(call.request).includes('bob@example.com'), 'the original call is not mutated');
});

const toolCallAnswer = (args: string, extra: Record<string, unknown> = {}) => ({
  ...chatCompletion(''),
  choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'mail', arguments: args } }], ...extra }, finish_reason: 'tool_calls' }],
});

test('post-call JSON answers: function-call arguments and refusals are checked; redaction stays inside the arguments string', async () => {
  const blocking = setup([guardrail({ name: 'out', stage: 'post' })]);
  await assert.rejects(blocking.output.run(userSays('hi'), async () => ({ kind: 'json', body: toolCallAnswer(`{"card":"${CARD}"}`) })), isBlock);
  await assert.rejects(blocking.output.run(userSays('hi'), async () => ({ kind: 'json', body: toolCallAnswer('{}', { refusal: `no, ${CARD}` }) })), isBlock);
  await assert.rejects(
    blocking.output.run(userSays('hi'), async () => ({ kind: 'json', body: { ...chatCompletion(''), choices: [{ index: 0, message: { role: 'assistant', content: null, function_call: { name: 'f', arguments: `"${CARD}"` } } }] } })),
    isBlock,
  );
  const redacting = setup([guardrail({ name: 'out', stage: 'post', action: 'redact' })]);
  const outcome = await redacting.output.run(userSays('hi'), async () => ({ kind: 'json', body: toolCallAnswer('{"to":"bob@example.com"}') }));
  const message = outcome.kind === 'json' && (outcome.body as any).choices[0].message;
  assert.equal(message.tool_calls[0].function.arguments, '{"to":"[REDACTED_EMAIL]"}');
  assert.equal(message.content, null);
});

function toolCallStream(fragments: string[]): Outcome {
  const base = { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'test-model' };
  const events: StreamEvent[] = [
    { raw: JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'mail', arguments: '' } }] }, finish_reason: null }] }) },
    ...fragments.map((fragment) => ({ raw: JSON.stringify({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: fragment } }] }, finish_reason: null }] }) })),
    { raw: JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } }), usage: { inputTokens: 5, outputTokens: 3 }, usageOnly: true },
  ];
  return { kind: 'stream', events: (async function* () { yield* events; })() };
}

const streamedArguments = (events: StreamEvent[]) =>
  events
    .filter((event) => !event.usageOnly)
    .map((event) => event.chunk ?? JSON.parse(event.raw!))
    .map((chunk) => chunk.choices[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? '')
    .join('');

test('post-call streams: function-call arguments are assembled per tool call across chunks, then checked', async () => {
  const blocking = setup([guardrail({ name: 'out', stage: 'post' })]);
  // The card number is split across fragments: only the assembled arguments show it.
  await assert.rejects(blocking.output.run(userSays('hi', { stream: true }), async () => toolCallStream(['{"card":"4111 1111 ', '1111 1111"}'])), isBlock);
  const redacting = setup([guardrail({ name: 'out', stage: 'post', action: 'redact' })]);
  const events = await collect(await redacting.output.run(userSays('hi', { stream: true }), async () => toolCallStream(['{"to":"bob@exa', 'mple.com"}'])));
  assert.equal(streamedArguments(events), '{"to":"[REDACTED_EMAIL]"}');
  assert.ok(events.at(-1)!.usageOnly);
});

test('a post-call block carries the upstream answer (usage and produced text) for the meter to charge', async () => {
  const { output } = setup([guardrail({ name: 'out', stage: 'post' })]);
  const blockedWith = async (outcome: Outcome) => {
    const error = await output.run(userSays('hi'), async () => outcome).then(() => assert.fail('expected a block'), (error: unknown) => error);
    assert.ok(isBlock(error));
    return (error as GatewayError).upstreamAnswer;
  };
  assert.deepEqual(await blockedWith({ kind: 'json', body: chatCompletion('mail bob@example.com'), usage: { inputTokens: 5, outputTokens: 3 } }), {
    usage: { inputTokens: 5, outputTokens: 3 },
    producedText: 'mail bob@example.com',
  });
  assert.deepEqual(await blockedWith(rawStream(['mail bob@', 'example.com'])), { usage: { inputTokens: 5, outputTokens: 3 }, producedText: 'mail bob@example.com' });
});

test('a failed webhook guardrail is 503 service_unavailable, logged as a warning, never as a block; fail_open lets the text through', async () => {
  const hook = guardrail({ name: 'hook', kind: 'webhook', config: { url: 'https://policy.example/check' } });
  const failures: Array<() => Promise<{ status: number; body: unknown }>> = [
    async () => {
      throw new Error('connect ECONNREFUSED 10.0.0.1');
    },
    async () => ({ status: 502, body: undefined }),
    async () => ({ status: 200, body: { verdict: 'fine' } }),
  ];
  for (const failure of failures) {
    for (const stage of ['pre', 'post'] as const) {
      const { input, output, logs, events, warnings } = setup([{ ...hook, stage }], failure);
      const run = stage === 'pre' ? input.run(userSays('anything'), passes) : output.run(userSays('anything'), async () => ({ kind: 'json', body: chatCompletion('answer') }));
      await assert.rejects(run, (error: unknown) => {
        assert.ok(error instanceof GatewayError);
        assert.equal(error.code, 'service_unavailable');
        assert.equal(error.status, 503);
        assert.equal(error.retryable, true);
        assert.equal(error.details?.guardrail_name, 'hook');
        assert.ok(!error.message.includes('10.0.0.1'));
        return true;
      });
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(logs, [], 'not in the guardrail log');
      assert.deepEqual(events, [], 'no guardrail.triggered event');
      assert.equal(warnings.length, 1);
      assert.equal(warnings[0].context.guardrail_name, 'hook');
    }
  }
  const open = setup([{ ...hook, config: { ...hook.config, fail_open: true } }], failures[0]);
  await open.input.run(userSays('anything'), passes);
  assert.deepEqual([open.logs.length, open.warnings.length], [0, 0]);
});

test('a client that leaves while a webhook guardrail is asked is a cancellation, not a block', async () => {
  const hook = guardrail({ name: 'hook', kind: 'webhook', config: { url: 'https://policy.example/check' } });
  const client = new AbortController();
  const left = new GatewayError('invalid_request', 'The client closed the connection.');
  const { input, logs, events, warnings } = setup([hook], async () => {
    client.abort(left);
    throw new Error('aborted');
  });
  const call = { ...userSays('anything'), signal: client.signal };
  await assert.rejects(input.run(call, passes), (error: unknown) => error === left);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual([logs.length, events.length, warnings.length], [0, 0, 0]);
});
