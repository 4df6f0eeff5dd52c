import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayError } from '../errors/gateway-error.js';
import { createEventBus, type GatewayEvent } from '../lib/event-bus.js';
import type { GatewayCall, Outcome } from '../pipeline/stage.js';
import { chatCompletion, collect, fakeCall, rawStream, streamText } from '../../test/features/fake-gateway-call.js';
import type { Guardrail } from './guardrail-types.js';
import { createInputGuardrailStage } from './input-guardrail-stage.js';
import { createOutputGuardrailStage } from './output-guardrail-stage.js';
import type { GuardrailLogEntry } from './sql-guardrail-store.js';

function guardrail(overrides: Partial<Guardrail>): Guardrail {
  return { id: crypto.randomUUID(), orgId: 'org-test', name: 'g', kind: 'pii', stage: 'pre', action: 'block', enabledByDefault: true, config: {}, createdAt: 0, updatedAt: 0, ...overrides };
}

function setup(guardrails: Guardrail[], post?: (url: string, body: unknown) => Promise<{ status: number; body: unknown }>) {
  const logs: GuardrailLogEntry[] = [];
  const events: GatewayEvent[] = [];
  const eventBus = createEventBus();
  eventBus.subscribe((event) => events.push(event));
  const deps = { store: { list: async () => guardrails }, eventBus, logWriter: { add: (entry: GuardrailLogEntry) => void logs.push(entry) }, post };
  return { input: createInputGuardrailStage(deps), output: createOutputGuardrailStage(deps), logs, events };
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
