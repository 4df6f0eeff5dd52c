import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fakeCall } from '../../test/features/fake-gateway-call.js';
import { nextTurn } from '../../test/helpers/deferred.js';
import type { GatewayError } from '../errors/gateway-error.js';
import { createTokenCounter } from '../metering/token-counter.js';
import { createAdmissionGateStage } from '../pipeline/admission.js';
import { composeStages } from '../pipeline/compose-stages.js';
import type { GatewayCall, Stage } from '../pipeline/stage.js';
import type { CounterStore, HitResult } from './counter-store.js';
import { createMemoryCounterStore } from './memory-counter-store.js';
import { createRateLimitStage } from './rate-limit-stage.js';

/** A counter store whose answers are given by the test, one per hit. */
function heldStore(): CounterStore & { answer(result: HitResult | Error): void; hits: number } {
  const waiting: Array<(result: HitResult | Error) => void> = [];
  const store = {
    hits: 0,
    hit() {
      store.hits++;
      return new Promise<HitResult>((resolve, reject) => waiting.push((result) => (result instanceof Error ? reject(result) : resolve(result))));
    },
    async adjust() {},
    async close() {},
    answer(result: HitResult | Error) {
      waiting.shift()!(result);
    },
  };
  return store;
}

const STATE = { limit: 10, remaining: 9, resetMs: 30_000, retryAfterMs: 0 };
const ALLOWED: HitResult = { allowed: true, blockedIndex: -1, states: [STATE, STATE, STATE] };
const REFUSED: HitResult = { allowed: false, blockedIndex: 0, states: [{ ...STATE, remaining: 0, retryAfterMs: 2_500 }, STATE, STATE] };

/** rate limit → a stage that notes when it ran → admission gate → a terminal that counts calls. */
function pipelineWith(store: CounterStore, onError?: (error: unknown) => void) {
  const seen: string[] = [];
  let reached = 0;
  const observer: Stage = {
    name: 'observer',
    run(call: GatewayCall, next) {
      seen.push('downstream stage ran');
      return next(call);
    },
  };
  const pipeline = composeStages([createRateLimitStage({ store, tokens: createTokenCounter(), onError }), observer, createAdmissionGateStage()], async () => {
    reached++;
    return { kind: 'json', body: {} };
  });
  return { pipeline, seen, reached: () => reached };
}

const chat = () => fakeCall({ request: { model: 'm', messages: [{ role: 'user', content: 'hi' }] } });

test('rate limit: the next stages run while the counter store answers; the router waits for the verdict', async () => {
  const store = heldStore();
  const { pipeline, seen, reached } = pipelineWith(store);
  const call = chat();
  const running = pipeline(call);
  await nextTurn();
  assert.equal(store.hits, 1);
  assert.deepEqual(seen, ['downstream stage ran'], 'not held up by the store');
  assert.equal(reached(), 0, 'the router is not called before the verdict');
  store.answer(ALLOWED);
  await running;
  assert.equal(reached(), 1);
  assert.equal(call.record.headers['x-ratelimit-limit-requests'], '10');
});

test('rate limit: a refusal is a 429 with Retry-After and the limit headers, and nothing reaches the router', async () => {
  const store = heldStore();
  const { pipeline, reached } = pipelineWith(store);
  const running = pipeline(chat());
  store.answer(REFUSED);
  await assert.rejects(running, (error: GatewayError) => {
    assert.equal(error.code, 'rate_limit_exceeded');
    assert.equal(error.status, 429);
    assert.equal(error.headers?.['retry-after'], '3');
    assert.equal(error.headers?.['x-ratelimit-remaining-requests'], '0');
    return true;
  });
  assert.equal(reached(), 0);
});

test('rate limit: a counter store failure lets the call through and is reported', async () => {
  const store = heldStore();
  const errors: unknown[] = [];
  const { pipeline, reached } = pipelineWith(store, (error) => errors.push(error));
  const running = pipeline(chat());
  store.answer(new Error('redis down'));
  await running;
  assert.equal(reached(), 1);
  assert.equal(errors.length, 1);
});

test('rate limit: with the in-memory store the second call over an RPM of 1 is refused', async () => {
  const store = createMemoryCounterStore({ sweepIntervalMs: 0 });
  const { pipeline, reached } = pipelineWith(store);
  const limited = () => {
    const call = chat();
    (call.auth.key as { limits: Record<string, number> }).limits = { rpm: 1 };
    return call;
  };
  await pipeline(limited());
  await assert.rejects(pipeline(limited()), (error: GatewayError) => error.status === 429);
  assert.equal(reached(), 1);
});

test('rate limit: in-process counters decide on the spot: a refusal stops the call before any later stage runs', async () => {
  const store = createMemoryCounterStore({ sweepIntervalMs: 0 });
  const { pipeline, seen, reached } = pipelineWith(store);
  const limited = () => {
    const call = chat();
    (call.auth.key as { limits: Record<string, number> }).limits = { rpm: 1 };
    return call;
  };
  const allowed = limited();
  await pipeline(allowed);
  assert.equal(allowed.record.headers['x-ratelimit-remaining-requests'], '0');
  assert.equal(allowed.admission, undefined, 'no admission promise was joined to the call');
  await assert.rejects(pipeline(limited()), (error: GatewayError) => error.status === 429 && error.headers?.['retry-after'] !== undefined);
  assert.deepEqual(seen, ['downstream stage ran'], 'the refused call never reached the next stage');
  assert.equal(reached(), 1);
});

test('rate limit: behind an earlier check still pending, in-process counters answer through the admission, so the earlier refusal wins', async () => {
  const store = createMemoryCounterStore({ sweepIntervalMs: 0 });
  const { pipeline, reached } = pipelineWith(store);
  const call = chat();
  (call.auth.key as { limits: Record<string, number> }).limits = { rpm: 1 };
  await pipeline(call);
  let refuseEarlier!: (error: Error) => void;
  const earlier = new Promise<void>((_, reject) => (refuseEarlier = reject));
  earlier.catch(() => {});
  const second = chat();
  (second.auth.key as { limits: Record<string, number> }).limits = { rpm: 1 };
  const running = pipeline({ ...second, admission: earlier });
  await nextTurn();
  refuseEarlier(new Error('stale key'));
  await assert.rejects(running, /stale key/, 'the earlier check’s refusal, not the 429');
  assert.equal(reached(), 1);
});

test('rate limit: a call covered by this instance\'s allowance is admitted on the spot, with no shared round trip and nothing joined to admission', async () => {
  const store = heldStore();
  let offered = 0;
  const withAllowance: CounterStore = {
    ...store,
    hit: store.hit,
    hitFromAllowance() {
      offered++;
      return ALLOWED;
    },
  };
  let admission: Promise<void> | undefined = Promise.resolve();
  const stage = createRateLimitStage({ store: withAllowance, tokens: createTokenCounter() });
  const call = chat();
  const outcome = await stage.run(call, async (passed) => {
    admission = passed.admission;
    return { kind: 'json', body: {} };
  });
  assert.equal(outcome.kind, 'json');
  assert.equal(offered, 1);
  assert.equal(store.hits, 0, 'the shared store was not asked');
  assert.equal(admission, undefined, 'no admission check to wait for');
  assert.equal(call.record.headers['x-ratelimit-remaining-requests'], '9');
});

/** "1m0s", "13.493s", "20ms" back to milliseconds. */
function resetMs(text: string): number {
  const match = /^(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?$/.exec(text);
  assert.ok(match, `reset format: ${text}`);
  return Number(match[1] ?? 0) * 60_000 + Math.round(Number(match[2] ?? 0) * 1000) + Number(match[3] ?? 0);
}

test('rate limit: on a 429 the reset header and Retry-After name the same moment, and a call then is admitted', async () => {
  let now = 1_700_000_040_000;
  const store = createMemoryCounterStore({ sweepIntervalMs: 0, now: () => now });
  const stage = createRateLimitStage({ store, tokens: createTokenCounter(), now: () => now });
  const limited = () => {
    const call = chat();
    (call.auth.key as { limits: Record<string, number> }).limits = { rpm: 3, tps: 100 };
    return call;
  };
  const run = (call: GatewayCall) => stage.run(call, async () => ({ kind: 'json', body: {} }));
  for (let index = 0; index < 3; index++) {
    now += 1_000;
    await run(limited());
  }
  // Past the end of the fixed window the three calls still weigh nearly 3: still refused there.
  now += 58_000;
  const refusal = (await run(limited()).catch((error: unknown) => error)) as GatewayError;
  assert.equal(refusal.status, 429);
  const reset = resetMs(refusal.headers!['x-ratelimit-reset-requests']!);
  const retryAfter = Number(refusal.headers!['retry-after']);
  assert.ok(reset > 1_000, `reset ${reset} ms`);
  assert.equal(retryAfter, Math.ceil(reset / 1000), 'Retry-After is the reset rounded up to the second');
  now += reset - 1;
  await assert.rejects(run(limited()), (error: GatewayError) => error.status === 429, 'refused just before the reset');
  now += 1;
  const admitted = limited();
  await run(admitted);
  assert.equal(admitted.record.headers['x-ratelimit-remaining-requests'], '0');
});

test('rate limit: while there is room the reset headers say 0ms (a request would be admitted now)', async () => {
  const store = createMemoryCounterStore({ sweepIntervalMs: 0 });
  const call = chat();
  await createRateLimitStage({ store, tokens: createTokenCounter() }).run(call, async () => ({ kind: 'json', body: {} }));
  assert.equal(call.record.headers['x-ratelimit-reset-requests'], '0ms');
  assert.equal(call.record.headers['x-ratelimit-reset-tokens'], '0ms');
});

test('rate limit: a request counting more tokens than the whole TPM limit is a 400 naming max_tokens, not a retryable 429', async () => {
  const store = createMemoryCounterStore({ sweepIntervalMs: 0 });
  const stage = createRateLimitStage({ store, tokens: createTokenCounter() });
  const over = (request: Record<string, unknown>, operation: 'chat' | 'completion' = 'chat') => {
    const call = fakeCall({ request: { model: 'm', ...request }, operation });
    (call.auth.key as { limits: Record<string, number> }).limits = { tpm: 1_000 };
    return stage.run(call, async () => ({ kind: 'json', body: {} }));
  };
  const messages = [{ role: 'user', content: 'hi' }];
  for (const [request, operation, param] of [
    [{ messages, max_tokens: 2_000 }, 'chat', 'max_tokens'],
    [{ messages, max_completion_tokens: 600, n: 2 }, 'chat', 'max_completion_tokens'],
    [{ prompt: 'hi', max_tokens: 5_000 }, 'completion', 'max_tokens'],
    [{ messages: [{ role: 'user', content: 'word '.repeat(3_000) }] }, 'chat', 'messages'],
  ] as const) {
    await assert.rejects(over(request, operation), (error: GatewayError) => {
      assert.equal(error.status, 400, error.message);
      assert.equal(error.code, 'invalid_request');
      assert.equal(error.param, param);
      assert.equal(error.headers?.['retry-after'], undefined);
      assert.match(error.message, /1000 tokens per minute/);
      return true;
    });
  }
  // Within the limit it is counted as before: the second such call is a 429.
  await over({ messages, max_tokens: 900 });
  await assert.rejects(over({ messages, max_tokens: 900 }), (error: GatewayError) => error.status === 429);
});

test("rate limit: max_tokens above the catalog's max output for the model is a 400 naming it", async () => {
  const stage = createRateLimitStage({
    store: createMemoryCounterStore({ sweepIntervalMs: 0 }),
    tokens: createTokenCounter(),
    maxOutputTokensOf: (model) => (model === 'capped' ? 4_096 : undefined),
  });
  const run = (request: Record<string, unknown>, operation: 'chat' | 'completion' = 'chat') =>
    stage.run(fakeCall({ request, operation }), async () => ({ kind: 'json', body: {} }));
  const messages = [{ role: 'user', content: 'hi' }];
  for (const [request, operation, param] of [
    [{ model: 'capped', messages, max_tokens: 4_097 }, 'chat', 'max_tokens'],
    [{ model: 'capped', messages, max_completion_tokens: 400_000 }, 'chat', 'max_completion_tokens'],
    [{ model: 'capped', prompt: 'x', max_tokens: 5_000 }, 'completion', 'max_tokens'],
  ] as const) {
    await assert.rejects(run(request, operation), (error: GatewayError) => {
      assert.equal(error.status, 400);
      assert.equal(error.param, param);
      assert.match(error.message, /at most 4096 output tokens/);
      return true;
    });
  }
  await run({ model: 'capped', messages, max_tokens: 4_096 });
  await run({ model: 'uncapped', messages, max_tokens: 100_000 });
});
