import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { deferred, nextTurn } from '../../test/helpers/deferred.js';
import { createMeterHarness, testAuth, testChatCall, type MeterHarness } from '../../test/helpers/meter-harness.js';
import { GatewayError } from '../errors/gateway-error.js';
import { createEventBus } from '../lib/event-bus.js';
import { createAdmissionGateStage } from '../pipeline/admission.js';
import { composeStages } from '../pipeline/compose-stages.js';
import type { GatewayCall, Next, Outcome, StreamEvent } from '../pipeline/stage.js';
import type { AuthContext } from '../tenancy/tenancy-types.js';
import { createAllowanceSpendGate } from './allowance-spend-gate.js';
import { createMemorySpendGate } from './memory-spend-gate.js';
import { createMeterStage } from './meter-stage.js';
import type { SpendGate } from './spend-gate.js';
import { createSpendSeeder } from './spend-seeder.js';
import { createTokenCounter } from './token-counter.js';
import type { CallSignal } from '../lib/call-signal.js';

let harness: MeterHarness;
before(async () => {
  harness = await createMeterHarness({
    // 1 nano per input token, 10 per output token: costs are easy to read.
    'test-chat': { inputPerMillion: '0.001', outputPerMillion: '0.01', maxOutputTokens: 100 },
    'half-priced': { inputPerMillion: '0.001' },
  });
});
after(() => harness.close());

const auth = testAuth;
const setup = (gate?: SpendGate) => harness.setup(gate);
function chatCall(context: AuthContext, overrides: Partial<GatewayCall> = {}, body: Record<string, unknown> = {}): GatewayCall {
  return testChatCall(context, { overrides, body });
}

const jsonAnswer = (usage = { inputTokens: 7, outputTokens: 3 }): Next => async () => ({ kind: 'json', body: { choices: [] }, usage });

test('non-stream: settles the reported usage, sets the cost header, records the ledger', async () => {
  const { stage, credits, ledger } = setup();
  const context = auth();
  await credits.topUp(context.org.id, 1_000_000, 'test');
  const call = chatCall(context);
  await stage.run(call, jsonAnswer());
  assert.equal(call.record.headers['x-gw-request-cost'], '0.000000037');
  assert.equal(call.record.costNanos, 37);
  const balance = await credits.balance(context.org.id);
  assert.deepEqual([balance.spentNanos, balance.reservedNanos, balance.availableNanos], [37, 0, 1_000_000 - 37]);
  const history = await ledger.history(context.org.id, { limit: 10, offset: 0 });
  assert.equal(history.length, 1);
  assert.equal(history[0].requestId, call.requestId);
  assert.equal(history[0].costNanos, 37);
  assert.deepEqual(history[0].units, { inputTokens: 7, outputTokens: 3 });
});

test('the answer does not wait for the counter write; until it lands the hold still counts, and a failed write is replayed', async () => {
  const gate = createMemorySpendGate({ sweepIntervalMs: 0 });
  const settleNow = gate.settle.bind(gate);
  const pending: Array<{ run(): void; fail(): void }> = [];
  gate.settle = (...args) =>
    new Promise((resolve, reject) => {
      pending.push({ run: () => void settleNow(...args).then(resolve, reject), fail: () => reject(new Error('connection reset')) });
    });
  const { credits, ledger } = setup(gate);
  const replays: unknown[] = [];
  const stage = createMeterStage({ pricing: harness.pricing, gate, seeder: createSpendSeeder({ gate, ledger }), ledger, events: createEventBus(), tokens: createTokenCounter(), deferGateWrite: (write) => void replays.push(write) });
  const context = auth();
  await credits.topUp(context.org.id, 1_000_000, 'test');

  const first = chatCall(context);
  await stage.run(first, jsonAnswer());
  assert.equal(first.record.headers['x-gw-request-cost'], '0.000000037', 'answered with its cost while the write is in flight');
  assert.equal(pending.length, 1);
  const held = await credits.balance(context.org.id);
  assert.equal(held.spentNanos, 0);
  assert.ok(held.reservedNanos >= 37, 'the estimate is still held, so nothing can overspend meanwhile');
  pending[0]!.run();
  await new Promise((resolve) => setImmediate(resolve));
  const settled = await credits.balance(context.org.id);
  assert.deepEqual([settled.spentNanos, settled.reservedNanos], [37, 0]);

  const second = chatCall(context);
  await stage.run(second, jsonAnswer());
  pending[1]!.fail();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(replays.length, 1);
  const replay = replays[0] as { kind: string; reservationId: string; accounts: Array<{ kind: string }>; actualNanos: number };
  assert.deepEqual([replay.kind, replay.reservationId, replay.actualNanos], ['settle', second.requestId, 37]);
  assert.ok(replay.accounts.some((account) => account.kind === 'credit'), 'the replay names the accounts to charge');
  const history = await ledger.history(context.org.id, { limit: 10, offset: 0 });
  assert.deepEqual(history.map((entry) => entry.requestId).sort(), [first.requestId, second.requestId].sort(), 'both calls are in the ledger');
});

test('402 when the balance cannot cover the estimate; nothing is held or charged', async () => {
  const { stage, credits, ledger } = setup();
  const context = auth();
  await credits.topUp(context.org.id, 100, null);
  let called = false;
  await assert.rejects(
    stage.run(chatCall(context), async () => {
      called = true;
      return { kind: 'json', body: {} };
    }),
    (error: GatewayError) => error.code === 'insufficient_credits' && error.status === 402,
  );
  assert.equal(called, false);
  const balance = await credits.balance(context.org.id);
  assert.deepEqual([balance.spentNanos, balance.reservedNanos], [0, 0]);
  assert.equal((await ledger.history(context.org.id, { limit: 10, offset: 0 })).length, 0);
});

test('503 credit_check_failed when the store is unreachable; the call never runs', async () => {
  const broken = createMemorySpendGate({ sweepIntervalMs: 0 });
  broken.reserve = async () => {
    throw new Error('connection refused');
  };
  const { stage } = setup(broken);
  let called = false;
  await assert.rejects(
    stage.run(chatCall(auth()), async () => {
      called = true;
      return { kind: 'json', body: {} };
    }),
    (error: GatewayError) => error.code === 'credit_check_failed' && error.status === 503,
  );
  assert.equal(called, false);
});

test('a failed call releases its hold', async () => {
  const { stage, credits } = setup();
  const context = auth();
  await credits.topUp(context.org.id, 1_000_000, null);
  await assert.rejects(stage.run(chatCall(context), async () => Promise.reject(new GatewayError('upstream_unavailable', 'down'))));
  const balance = await credits.balance(context.org.id);
  assert.deepEqual([balance.spentNanos, balance.reservedNanos], [0, 0]);
});

test('a call refused after its upstream answered (the error carries the answer) is charged as a normal call, JSON and stream', async () => {
  const { stage, credits, ledger } = setup();
  const context = auth();
  await credits.topUp(context.org.id, 1_000_000, null);
  const refused = (usage?: { inputTokens: number; outputTokens: number }) =>
    new GatewayError('guardrail_blocked', 'Blocked by guardrail "g".', { upstreamAnswer: { usage, producedText: 'hello there' } });
  const json = chatCall(context);
  await assert.rejects(stage.run(json, async () => Promise.reject(refused({ inputTokens: 7, outputTokens: 3 }))), (error: GatewayError) => error.code === 'guardrail_blocked');
  assert.equal(json.record.costNanos, 37);
  assert.equal(json.record.headers['x-gw-request-cost'], '0.000000037');
  const stream = chatCall(context, { stream: true });
  await assert.rejects(stage.run(stream, async () => Promise.reject(refused({ inputTokens: 5, outputTokens: 2 }))), (error: GatewayError) => error.code === 'guardrail_blocked');
  assert.equal(stream.record.costNanos, 25);
  // No usage reported: counted from the prompt and the produced text, marked estimated.
  const counted = chatCall(context);
  await assert.rejects(stage.run(counted, async () => Promise.reject(refused())));
  assert.ok(counted.record.costNanos! > 0);
  const balance = await credits.balance(context.org.id);
  assert.deepEqual([balance.spentNanos, balance.reservedNanos], [37 + 25 + counted.record.costNanos!, 0]);
  const history = await ledger.history(context.org.id, { limit: 10, offset: 0 });
  assert.deepEqual(history.map((entry) => entry.requestId).sort(), [json.requestId, stream.requestId, counted.requestId].sort());
  assert.equal(history.find((entry) => entry.requestId === counted.requestId)!.units.estimated, true);
});

test('unpriced models are refused unless the org allows them, then flagged', async () => {
  const { stage, credits, ledger } = setup();
  const strict = auth();
  await credits.topUp(strict.org.id, 1_000_000, null);
  await assert.rejects(stage.run(chatCall(strict, { model: 'half-priced' }), jsonAnswer()), (error: GatewayError) => error.code === 'model_not_priced');
  const relaxed = auth({ allowUnpriced: true });
  await credits.topUp(relaxed.org.id, 1_000_000, null);
  const call = chatCall(relaxed, { model: 'half-priced' });
  await stage.run(call, jsonAnswer());
  assert.equal(call.record.unpriced, true);
  assert.equal(call.record.costNanos, 7);
  const [entry] = await ledger.history(relaxed.org.id, { limit: 1, offset: 0 });
  assert.equal(entry.unpriced, true);
});

test('a cache hit costs 0', async () => {
  const { stage, credits } = setup();
  const context = auth();
  await credits.topUp(context.org.id, 1_000_000, null);
  const call = chatCall(context);
  await stage.run(call, async (inner) => {
    inner.record.cache = 'hit';
    return { kind: 'json', body: {}, usage: { inputTokens: 7, outputTokens: 3 } };
  });
  assert.equal(call.record.headers['x-gw-request-cost'], '0.000000000');
  assert.equal((await credits.balance(context.org.id)).spentNanos, 0);
});

async function* events(list: StreamEvent[], onDone?: () => void): AsyncGenerator<StreamEvent> {
  for (const event of list) {
    await new Promise((resolve) => setImmediate(resolve));
    yield event;
  }
  onDone?.();
}

const streamEvents = (): StreamEvent[] => [
  { chunk: { id: 'c', object: 'chat.completion.chunk', created: 0, model: 'test-chat', choices: [{ index: 0, delta: { content: 'hel' }, finish_reason: null }] } },
  { chunk: { id: 'c', object: 'chat.completion.chunk', created: 0, model: 'test-chat', choices: [{ index: 0, delta: { content: 'lo' }, finish_reason: 'stop' }] } },
  { raw: '{}', usage: { inputTokens: 5, outputTokens: 2 }, usageOnly: true },
];

test('stream: the usage event carries the cost; settlement happens at the end', async () => {
  const { stage, credits } = setup();
  const context = auth();
  await credits.topUp(context.org.id, 1_000_000, null);
  const call = chatCall(context, { stream: true });
  const outcome = (await stage.run(call, async () => ({ kind: 'stream', events: events(streamEvents()) }))) as Extract<Outcome, { kind: 'stream' }>;
  const seen: StreamEvent[] = [];
  for await (const event of outcome.events) seen.push(event);
  assert.equal(seen[2].costUsd, '0.000000025');
  const balance = await credits.balance(context.org.id);
  assert.deepEqual([balance.spentNanos, balance.reservedNanos], [25, 0]);
});

test('stream abandoned by the client: the rest is drained and billed exactly', async () => {
  const { stage, credits } = setup();
  const context = auth();
  await credits.topUp(context.org.id, 1_000_000, null);
  const client = new AbortController();
  const call = chatCall(context, { stream: true, signal: client.signal });
  let drained!: () => void;
  const done = new Promise<void>((resolve) => (drained = resolve));
  let upstreamSignal: CallSignal | undefined;
  const outcome = (await stage.run(call, async (inner) => {
    upstreamSignal = inner.signal;
    return { kind: 'stream', events: events(streamEvents(), drained) };
  })) as Extract<Outcome, { kind: 'stream' }>;
  for await (const event of outcome.events) {
    assert.ok(event.chunk);
    client.abort();
    break;
  }
  assert.equal(upstreamSignal?.aborted, false, 'the upstream keeps running after the client left');
  await done;
  for (let attempt = 0; attempt < 50 && (await credits.balance(context.org.id)).spentNanos === 0; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const balance = await credits.balance(context.org.id);
  assert.deepEqual([balance.spentNanos, balance.reservedNanos], [25, 0]);
});

test('budget thresholds fire once per crossing with rising severity', async () => {
  const { stage, credits, published } = setup();
  const context = auth({ keyBudget: { limitNanos: 2000, period: 'monthly', thresholds: [0.5, 0.8, 1] } });
  await credits.topUp(context.org.id, 1_000_000, null);
  // Each call reserves ≤ 4 + 50×10 + priming… well under the budget, and settles 700.
  const answer = jsonAnswer({ inputTokens: 700, outputTokens: 0 });
  await stage.run(chatCall(context), answer); // 700: below 50%
  await stage.run(chatCall(context), answer); // 1400: crosses 50%
  await stage.run(chatCall(context), answer); // 2100: crosses 80% and 100%
  await new Promise((resolve) => setImmediate(resolve));
  const budgetEvents = published.filter((event) => event.details.account === 'key');
  assert.deepEqual(
    budgetEvents.map((event) => [event.details.threshold, event.severity]),
    [
      [0.5, 'WARNING'],
      [0.8, 'HIGH'],
      [1, 'CRITICAL'],
    ],
  );
  assert.equal(budgetEvents[0].details.key_alias, 'sk-...abcd');
  assert.equal(budgetEvents[0].details.org_id, context.org.id);
  assert.equal(budgetEvents[2].details.current_spend, '0.000002100');
  // The key is now at its budget: blocked.
  await assert.rejects(stage.run(chatCall(context), answer), (error: GatewayError) => error.code === 'insufficient_credits');
});

test('moderations are not metered', async () => {
  const { stage } = setup();
  const call = chatCall(auth(), { operation: 'moderation', model: 'anything' });
  const outcome = await stage.run(call, async () => ({ kind: 'json', body: { ok: true } }));
  assert.deepEqual(outcome, { kind: 'json', body: { ok: true } });
  assert.equal(call.record.headers['x-gw-request-cost'], undefined);
});

const RATE_LIMITED = () => new GatewayError('rate_limit_exceeded', 'Requests per minute limit reached for this key.');

/**
 * A funded call whose admission is still open, run through the meter (on `gate`, a memory gate by
 * default) and the admission gate (which waits for admission here); `ran` tells if it reached the router.
 */
async function callWithOpenAdmission(gate?: SpendGate) {
  const { stage, credits } = setup(gate);
  const context = auth();
  await credits.topUp(context.org.id, 1_000_000, null);
  const admission = deferred();
  let ran = false;
  const pipeline = composeStages([stage, createAdmissionGateStage()], async () => {
    ran = true;
    return { kind: 'json', body: { choices: [] }, usage: { inputTokens: 7, outputTokens: 3 } };
  });
  const running = pipeline(chatCall(context, { admission: admission.promise }));
  await nextTurn();
  const balance = () => credits.balance(context.org.id);
  return { admission, running, ran: () => ran, balance };
}

test('admission in flight: the hold is sent at once and becomes part of admission; the gate waits for both', async () => {
  const { admission, running, ran, balance } = await callWithOpenAdmission();
  assert.ok((await balance()).reservedNanos > 0, 'held before admission answered');
  assert.equal(ran(), false, 'not run before admission');
  admission.pass();
  await running;
  assert.equal(ran(), true);
  const settled = await balance();
  assert.deepEqual([settled.spentNanos, settled.reservedNanos], [37, 0]);
});

test('admission in flight: the meter passes the call on at once, its admission now includes the hold', async () => {
  const { stage, credits } = setup();
  const context = auth();
  await credits.topUp(context.org.id, 10, null);
  const admission = deferred();
  let passedOn: GatewayCall | undefined;
  const running = stage.run(chatCall(context, { admission: admission.promise }), async (call) => {
    passedOn = call;
    await call.admission;
    return { kind: 'json', body: { choices: [] }, usage: { inputTokens: 7, outputTokens: 3 } };
  });
  await nextTurn();
  assert.ok(passedOn, 'the meter did not wait for admission');
  admission.pass();
  // The key was admitted, but 10 nano-USD cannot cover the hold: the call's admission refuses with a 402.
  await assert.rejects(running, (error: GatewayError) => error.code === 'insufficient_credits');
  const balanceAfter = await credits.balance(context.org.id);
  assert.deepEqual([balanceAfter.spentNanos, balanceAfter.reservedNanos], [0, 0]);
});

test('admission refused: the refusal is answered, the hold that landed is released, nothing runs', async () => {
  const { admission, running, ran, balance } = await callWithOpenAdmission();
  admission.refuse(RATE_LIMITED());
  await assert.rejects(running, (error: GatewayError) => error.code === 'rate_limit_exceeded');
  await nextTurn();
  assert.equal(ran(), false);
  const released = await balance();
  assert.deepEqual([released.spentNanos, released.reservedNanos], [0, 0]);
});

test('admission refused and credits short: the admission refusal wins (429, not 402)', async () => {
  const { stage, credits } = setup();
  const context = auth();
  await credits.topUp(context.org.id, 10, null);
  const admission = deferred();
  const gated = composeStages([stage, createAdmissionGateStage()], jsonAnswer());
  const running = gated(chatCall(context, { admission: admission.promise }));
  setImmediate(() => admission.refuse(RATE_LIMITED()));
  await assert.rejects(running, (error: GatewayError) => error.code === 'rate_limit_exceeded');
  // And an unpriced model on a refused call: the refusal too.
  const refused = Promise.reject(RATE_LIMITED());
  refused.catch(() => {});
  await assert.rejects(stage.run(chatCall(context, { model: 'half-priced', admission: refused }), jsonAnswer()), (error: GatewayError) => error.code === 'rate_limit_exceeded');
});

test('allowances: after the first call claims credit for several, the next calls are held at once, each settled at its own cost', async () => {
  const shared = createMemorySpendGate({ sweepIntervalMs: 0 });
  let claims = 0;
  const claim = shared.claim!.bind(shared);
  const counted: SpendGate = {
    ...shared,
    claim: (...args) => {
      claims++;
      return claim(...args);
    },
  };
  const allowances = createAllowanceSpendGate(counted, { share: 8, sweepIntervalMs: 0 });
  const { stage, credits } = setup(allowances);
  const context = auth();
  await credits.topUp(context.org.id, 1_000_000, 'test');
  for (let index = 0; index < 5; index++) {
    let admission: Promise<void> | undefined;
    const call = chatCall(context);
    await stage.run(call, async (passed) => {
      admission = passed.admission;
      return { kind: 'json', body: { choices: [] }, usage: { inputTokens: 7, outputTokens: 3 } };
    });
    assert.equal(call.record.costNanos, 37);
    assert.equal(admission, undefined, 'nothing joined to admission: the hold was taken at once or awaited');
  }
  assert.equal(claims, 1, 'one claim covered the five calls');
  await allowances.close();
  const balance = await credits.balance(context.org.id);
  assert.deepEqual([balance.spentNanos, balance.reservedNanos], [5 * 37, 0]);
});

test('allowances: admission refused while the claim is still being made; the call it carves is given back, the claim released', async () => {
  const shared = createMemorySpendGate({ sweepIntervalMs: 0 });
  const claimAnswered = deferred();
  const claim = shared.claim!.bind(shared);
  const slowClaims: SpendGate = {
    ...shared,
    claim: async (...args) => {
      await claimAnswered.promise;
      return claim(...args);
    },
  };
  let clock = 1_000;
  const allowances = createAllowanceSpendGate(slowClaims, { share: 8, idleMs: 100, sweepIntervalMs: 0, now: () => clock });
  const { admission, running, ran, balance } = await callWithOpenAdmission(allowances);
  // The rate limit refuses first: the refusal is answered while the claim is still on its way.
  admission.refuse(RATE_LIMITED());
  await assert.rejects(running, (error: GatewayError) => error.code === 'rate_limit_exceeded');
  claimAnswered.pass();
  await nextTurn();
  await nextTurn();
  assert.equal(ran(), false);
  // Idle past idleMs: the claim goes back whole, since nothing carved from it still runs.
  clock += 1_000;
  await allowances.sweepIdle();
  const released = await balance();
  assert.deepEqual([released.spentNanos, released.reservedNanos], [0, 0]);
  await allowances.close();
});

test('admission refused before the hold is answered: the release is sent after the hold, never before it', async () => {
  const shared = createMemorySpendGate({ sweepIntervalMs: 0 });
  const holdAnswered = deferred();
  const order: string[] = [];
  const slowHolds: SpendGate = {
    ...shared,
    reserve: async (...args) => {
      await holdAnswered.promise;
      const result = await shared.reserve(...args);
      order.push('hold landed');
      return result;
    },
    release: (reservationId) => {
      order.push('release');
      return shared.release(reservationId);
    },
  };
  const { admission, running, balance } = await callWithOpenAdmission(slowHolds);
  admission.refuse(RATE_LIMITED());
  await assert.rejects(running, (error: GatewayError) => error.code === 'rate_limit_exceeded');
  await nextTurn();
  assert.deepEqual(order, [], 'nothing released while the hold is on its way');
  holdAnswered.pass();
  await nextTurn();
  assert.deepEqual(order, ['hold landed', 'release']);
  const released = await balance();
  assert.deepEqual([released.spentNanos, released.reservedNanos], [0, 0]);
});

test('a call admitted before a period boundary and settled after it is dated at admission, so its counter and the ledger agree on the period', async () => {
  const gate = createMemorySpendGate({ sweepIntervalMs: 0 });
  const { credits, ledger } = setup(gate);
  const dayEnd = Date.UTC(2026, 10, 30);
  let clock = dayEnd - 100;
  const stage = createMeterStage({ pricing: harness.pricing, gate, seeder: createSpendSeeder({ gate, ledger }), ledger, events: createEventBus(), tokens: createTokenCounter(), now: () => clock });
  const context = auth({ keyBudget: { limitNanos: 1_000_000, period: 'daily', thresholds: [] } });
  await credits.topUp(context.org.id, 1_000_000, 'test');
  const call = chatCall(context);
  await stage.run(call, async () => {
    clock = dayEnd + 500;
    return { kind: 'json', body: { choices: [] }, usage: { inputTokens: 7, outputTokens: 3 } };
  });
  const keyAccount = call.record.spendAccounts!.find((account) => account.kind === 'key')!;
  assert.equal(keyAccount.key, `key:${context.key.id}:d2026-11-29`);
  assert.equal((await gate.read(keyAccount.key)).spentNanos, 37);
  const [entry] = await ledger.history(context.org.id, { limit: 1, offset: 0 });
  assert.equal(entry!.createdAt, dayEnd - 100);
  await ledger.flush();
  assert.equal(await ledger.spentSince({ keyId: context.key.id }, dayEnd - 86_400_000), 37, 'seeding the old day counts it');
  assert.equal(await ledger.spentSince({ keyId: context.key.id }, dayEnd), 0, 'seeding the new day does not count it again');
});
