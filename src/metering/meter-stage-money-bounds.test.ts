import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { nextTurn } from '../../test/helpers/deferred.js';
import { createMeterHarness, testAuth, testChatCall, type MeterHarness } from '../../test/helpers/meter-harness.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { GatewayCall, Next } from '../pipeline/stage.js';
import type { Usage } from '../protocol/usage.js';
import type { AuthContext } from '../tenancy/tenancy-types.js';
import { createAllowanceSpendGate } from './allowance-spend-gate.js';
import { createMemorySpendGate } from './memory-spend-gate.js';
import { MAX_CREDITED_NANOS, MAX_TOP_UP_NANOS } from './money-limits.js';
import type { OrgCredits } from './org-credits.js';
import { createTokenCounter } from './token-counter.js';

let harness: MeterHarness;
before(async () => {
  harness = await createMeterHarness({
    // 1 nano per input token, 10 per output token.
    'test-chat': { inputPerMillion: '0.001', outputPerMillion: '0.01', maxOutputTokens: 100 },
    // No output cap in the price: the reservation assumes 4096 output tokens.
    'uncapped-chat': { inputPerMillion: '0.001', outputPerMillion: '0.01' },
    // One prompt token costs 1,000,000 USD: any prompt is past what a counter holds exactly.
    'absurd-chat': { inputPerMillion: '1000000000000', outputPerMillion: '0.01' },
  });
});
after(() => harness.close());

const auth = testAuth;
const setup: MeterHarness['setup'] = (gate, wrapLedger) => harness.setup(gate, wrapLedger);
function chatCall(context: AuthContext, body: Record<string, unknown> = {}, model = 'test-chat'): GatewayCall {
  return testChatCall(context, { body, model });
}

/** Answers with `usage`, noting what the call's accounts held while it ran. */
function answerWith(usage: Usage | undefined, credits: OrgCredits, orgId: string, seen: { reservedNanos?: number } = {}): Next {
  return async () => {
    seen.reservedNanos = (await credits.balance(orgId)).reservedNanos;
    return { kind: 'json', body: { choices: [{ message: { content: 'hello there' } }] }, usage };
  };
}

test('a cost that cannot be computed is charged at the hold: the call is answered, the error logged, no hold is left', async () => {
  const { stage, credits, ledger, errors } = setup();
  const context = auth();
  await credits.topUp(context.org.id, 1_000_000, null);
  const call = chatCall(context);
  const seen: { reservedNanos?: number } = {};
  // A fractional token count reaching the cost as it is (BigInt(10.5) throws).
  const outcome = await stage.run(call, answerWith({ inputTokens: 10.5, outputTokens: 3 }, credits, context.org.id, seen));
  assert.equal(outcome.kind, 'json');
  const hold = seen.reservedNanos!;
  assert.ok(hold > 0);
  assert.equal(call.record.costNanos, hold);
  assert.equal(call.record.headers['x-gw-request-cost'], `0.${String(hold).padStart(9, '0')}`);
  await nextTurn();
  const balance = await credits.balance(context.org.id);
  assert.deepEqual([balance.spentNanos, balance.reservedNanos], [hold, 0]);
  const [entry] = await ledger.history(context.org.id, { limit: 1, offset: 0 });
  assert.equal(entry.costNanos, hold);
  assert.equal(entry.units.estimated, true);
  assert.deepEqual(errors, ['cost computation failed; the call is charged its hold']);
});

test('a settlement that fails for any other reason still answers the call and releases its hold', async () => {
  const { stage, credits, errors } = setup(undefined, (ledger) => ({
    ...ledger,
    record: () => {
      throw new Error('ledger queue broken');
    },
  }));
  const context = auth();
  await credits.topUp(context.org.id, 1_000_000, null);
  const outcome = await stage.run(chatCall(context), answerWith({ inputTokens: 7, outputTokens: 3 }, credits, context.org.id));
  assert.equal(outcome.kind, 'json');
  await nextTurn();
  assert.equal((await credits.balance(context.org.id)).reservedNanos, 0);
  assert.deepEqual(errors, ['settlement failed; the hold was released']);
});

test('an estimate past the exact range: 400 naming max_tokens (or max_completion_tokens), 402 when no output cap causes it', async () => {
  const { stage, credits } = setup();
  const context = auth();
  await credits.topUp(context.org.id, 1_000_000, null);
  let ran = false;
  const never: Next = async () => {
    ran = true;
    return { kind: 'json', body: {} };
  };
  for (const field of ['max_tokens', 'max_completion_tokens']) {
    await assert.rejects(
      stage.run(chatCall(context, { max_tokens: undefined, [field]: 1e15 }), never),
      (error: GatewayError) => error.code === 'invalid_request' && error.status === 400 && error.param === field && /beyond the 9007199\.254740991 USD/.test(error.message),
    );
  }
  await assert.rejects(
    stage.run(chatCall(context, {}, 'absurd-chat'), never),
    (error: GatewayError) => error.code === 'insufficient_credits' && error.status === 402 && error.param === undefined,
  );
  assert.equal(ran, false);
  const balance = await credits.balance(context.org.id);
  assert.deepEqual([balance.spentNanos, balance.reservedNanos], [0, 0]);
});

test('a cost above its hold is charged in full and marked; the balance below zero then refuses every call with 402', async () => {
  const { stage, credits, ledger } = setup();
  const context = auth();
  await credits.topUp(context.org.id, 50_000, null);
  const call = chatCall(context, { max_tokens: undefined }, 'uncapped-chat');
  const seen: { reservedNanos?: number } = {};
  // Neither the request nor the price caps the output: 4096 tokens are held, 10,000 come back.
  await stage.run(call, answerWith({ inputTokens: 8, outputTokens: 10_000 }, credits, context.org.id, seen));
  assert.equal(call.record.costNanos, 100_008);
  await nextTurn();
  const balance = await credits.balance(context.org.id);
  assert.deepEqual([balance.spentNanos, balance.reservedNanos, balance.availableNanos], [100_008, 0, -50_008]);
  const [entry] = await ledger.history(context.org.id, { limit: 1, offset: 0 });
  assert.equal(entry.costNanos, 100_008);
  assert.equal(entry.units.overHoldNanos, 100_008 - seen.reservedNanos!);
  for (const body of [{}, { max_tokens: 1 }]) {
    await assert.rejects(
      stage.run(chatCall(context, body), answerWith({ inputTokens: 1, outputTokens: 1 }, credits, context.org.id)),
      (error: GatewayError) => error.code === 'insufficient_credits' && error.status === 402,
    );
  }
  await credits.topUp(context.org.id, 100_000, null);
  await stage.run(chatCall(context, { max_tokens: 1 }), answerWith({ inputTokens: 1, outputTokens: 1 }, credits, context.org.id));
});

test('allowances: a cost above its hold ends the claim, so the next call is checked against the spent-out balance', async () => {
  const allowances = createAllowanceSpendGate(createMemorySpendGate({ sweepIntervalMs: 0 }), { share: 4, sweepIntervalMs: 0 });
  const { stage, credits } = setup(allowances);
  const context = auth();
  await credits.topUp(context.org.id, 1_000_000, null);
  await stage.run(chatCall(context, { max_tokens: undefined }, 'uncapped-chat'), answerWith({ inputTokens: 8, outputTokens: 200_000 }, credits, context.org.id));
  await nextTurn();
  assert.ok((await credits.balance(context.org.id)).spentNanos > 1_000_000);
  await assert.rejects(
    stage.run(chatCall(context, { max_tokens: 1 }), answerWith({ inputTokens: 1, outputTokens: 1 }, credits, context.org.id)),
    (error: GatewayError) => error.code === 'insufficient_credits',
  );
  await allowances.close();
});

test('a key its budget blocks short of 100% sends the CRITICAL threshold once, saying it is blocked', async () => {
  const { stage, credits, published } = setup();
  const context = auth({ keyBudget: { limitNanos: 40_000, period: 'monthly', thresholds: [0.5, 0.8, 1] } });
  await credits.topUp(context.org.id, 1_000_000_000, null);
  // Each call holds about 10,000 nanos (1000 output tokens); the first spends 20,000 (50%), the second 14,000 (85%).
  const body = { max_tokens: 1000 };
  await stage.run(chatCall(context, body), answerWith({ inputTokens: 0, outputTokens: 2000 }, credits, context.org.id));
  await nextTurn();
  await stage.run(chatCall(context, body), answerWith({ inputTokens: 0, outputTokens: 1400 }, credits, context.org.id));
  await nextTurn();
  const thresholdEvents = () => published.filter((event) => event.kind === 'budget.threshold' && (event.details as { account: string }).account === 'key');
  assert.deepEqual(thresholdEvents().map((event) => [event.severity, (event.details as { threshold: number }).threshold]), [['WARNING', 0.5], ['HIGH', 0.8]]);
  for (let attempt = 0; attempt < 3; attempt++) {
    await assert.rejects(
      stage.run(chatCall(context, body), answerWith({ inputTokens: 0, outputTokens: 1 }, credits, context.org.id)),
      (error: GatewayError) => error.code === 'insufficient_credits',
    );
    await nextTurn();
    await nextTurn();
  }
  const events = thresholdEvents();
  assert.equal(events.length, 3, 'the blocked alert fires once per period, not per refused call');
  const blocked = events[2];
  assert.equal(blocked.severity, 'CRITICAL');
  assert.match(blocked.title, /key budget blocks calls \(85% used\)/);
  const details = blocked.details as Record<string, unknown>;
  assert.equal(details.threshold, 1);
  assert.equal(details.blocked, true);
  assert.equal(details.current_spend, '0.000034000');
  assert.equal(details.budget, '0.000040000');
  assert.equal(details.available_usd, '0.000006000');
  assert.match(String(details.required_usd), /^0\.0000100\d\d$/);
  assert.equal(details.key_alias, 'sk-...abcd');
});

test('a blocked alert and a later crossing of 100% share one marker: CRITICAL fires once per period', async () => {
  const { stage, credits, published } = setup();
  const context = auth({ keyBudget: { limitNanos: 40_000, period: 'monthly', thresholds: [1] } });
  await credits.topUp(context.org.id, 1_000_000_000, null);
  await stage.run(chatCall(context, { max_tokens: 1000 }), answerWith({ inputTokens: 0, outputTokens: 3400 }, credits, context.org.id));
  await assert.rejects(stage.run(chatCall(context, { max_tokens: 1000 }), answerWith({ inputTokens: 0, outputTokens: 1 }, credits, context.org.id)));
  await nextTurn();
  await nextTurn();
  // A small call takes spend across 100%.
  await stage.run(chatCall(context, { max_tokens: 100 }), answerWith({ inputTokens: 0, outputTokens: 600 }, credits, context.org.id));
  await nextTurn();
  await nextTurn();
  const critical = published.filter((event) => event.kind === 'budget.threshold' && event.severity === 'CRITICAL');
  assert.equal(critical.length, 1);
  assert.equal((critical[0].details as { blocked?: boolean }).blocked, true);
});

test('top-ups: validated before anything is written; the credited total is bounded; concurrent top-ups cannot both pass', async () => {
  const { credits } = setup();
  const orgId = testAuth().org.id;
  const rows = async () => (await harness.database.db.selectFrom('credit_transactions').select('id').where('org_id', '=', orgId).execute()).length;
  await assert.rejects(credits.topUp(orgId, MAX_TOP_UP_NANOS + 1, null), (error: GatewayError) => error.status === 400 && error.param === 'amount_usd');
  assert.equal(await rows(), 0);
  for (let index = 0; index < 8; index++) await credits.topUp(orgId, MAX_TOP_UP_NANOS, null);
  await credits.topUp(orgId, MAX_TOP_UP_NANOS / 2, null);
  const results = await Promise.allSettled([credits.topUp(orgId, MAX_TOP_UP_NANOS / 2, null), credits.topUp(orgId, MAX_TOP_UP_NANOS / 2, null)]);
  assert.deepEqual(results.map((result) => result.status), ['fulfilled', 'rejected']);
  const refused = (results[1] as PromiseRejectedResult).reason as GatewayError;
  assert.equal(refused.status, 400);
  assert.match(refused.message, /above the maximum of 9000000\.000000000 USD/);
  const balance = await credits.balance(orgId);
  assert.equal(balance.creditedNanos, MAX_CREDITED_NANOS);
  assert.equal(await rows(), 10, 'the refused top-up wrote no row');
});

test('a JSON answer without usage that only calls tools is charged for its function names and arguments', async () => {
  const { stage, credits, ledger } = setup();
  const context = auth();
  await credits.topUp(context.org.id, 1_000_000, null);
  const argumentsText = '{"location":"Paris, France","unit":"celsius"}';
  const call = chatCall(context, { max_tokens: 100 });
  await stage.run(call, async () => ({
    kind: 'json',
    body: {
      choices: [
        { message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: argumentsText } }] } },
        { message: { role: 'assistant', content: null, function_call: { name: 'get_time', arguments: '{}' } } },
      ],
    },
    usage: undefined,
  }));
  const tokens = createTokenCounter();
  const produced = tokens.count(`get_weather${argumentsText}get_time{}`);
  assert.ok(produced > 0);
  assert.equal(call.record.usage?.outputTokens, produced, 'every function call counted, none as zero');
  await nextTurn();
  const [entry] = await ledger.history(context.org.id, { limit: 1, offset: 0 });
  assert.equal(entry.units.estimated, true);
  assert.equal(entry.units.outputTokens, produced);
});
