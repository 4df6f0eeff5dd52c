import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { describe, test } from 'node:test';
import { GatewayError } from '../errors/gateway-error.js';
import { CALL_STEP_CHANNEL, type CallStep } from '../observability/call-steps.js';
import { createEventBus, type GatewayEvent } from '../lib/event-bus.js';
import type { GatewayCall, Outcome, StreamEvent } from '../pipeline/stage.js';
import type { Operation } from '../protocol/endpoints.js';
import type { Invocation, Provider } from '../providers/provider.js';
import type { Deployment, ModelRoute } from './catalog-types.js';
import { createCircuitBreaker } from './circuit-breaker.js';
import { createRouter } from './create-router.js';
import { defaultDeployment } from './default-deployment.js';
import { createMemoryCircuitStore } from './memory-circuit-store.js';
import { createMemoryHealthStore } from './memory-health-store.js';
import type { ModelCatalog } from './model-catalog.js';
import type { RouterClock } from './router-clock.js';

type Behaviour = (invocation: Invocation, attempt: number) => Promise<Outcome>;

/** A provider whose answer per deployment is scripted; counts invocations per deployment. */
function scriptedProvider(behaviours: Record<string, Behaviour>, operations: Operation[] = ['chat']) {
  const calls: Invocation[] = [];
  const counts = new Map<string, number>();
  const provider: Provider = {
    id: 'fake',
    operations: new Set(operations),
    async invoke(invocation) {
      calls.push(invocation);
      const count = (counts.get(invocation.target.deploymentId) ?? 0) + 1;
      counts.set(invocation.target.deploymentId, count);
      return behaviours[invocation.target.deploymentId]!(invocation, count);
    },
  };
  return { provider, calls, count: (id: string) => counts.get(id) ?? 0 };
}

function deployment(id: string, modelId: string, overrides: Partial<Deployment> = {}): Deployment {
  return { ...defaultDeployment(id, modelId, 'fake', `${id}-upstream`), ...overrides };
}

function model(id: string, deployments: Deployment[], overrides: Partial<ModelRoute> = {}): ModelRoute {
  return { id, ownedBy: 'fake', strategy: 'priority', fallbacks: [], description: null, createdAt: 0, deployments, ...overrides };
}

function staticCatalog(models: ModelRoute[]): ModelCatalog {
  const byId = new Map(models.map((entry) => [entry.id, entry]));
  const deployments = new Map(models.flatMap((entry) => entry.deployments.map((item) => [item.id, item] as const)));
  return {
    get: (id) => byId.get(id),
    list: () => models,
    reload: async () => {},
    target(id) {
      const item = deployments.get(id);
      if (!item) return undefined;
      return { deploymentId: id, provider: item.provider, upstreamModel: item.upstreamModel, apiKey: `key-${id}`, settings: {}, timeouts: item.timeouts };
    },
  };
}

function fakeClock() {
  const sleeps: number[] = [];
  let now = 0;
  const clock: RouterClock = {
    now: () => now,
    async sleep(ms) {
      sleeps.push(ms);
      now += ms;
    },
  };
  return { clock, sleeps, advance: (ms: number) => (now += ms) };
}

function fakeCall(modelId: string, options: { stream?: boolean; signal?: AbortSignal; request?: Record<string, unknown> } = {}): GatewayCall {
  return {
    requestId: 'req_test',
    operation: 'chat',
    auth: { key: { alias: 'sk-...abcd' }, org: { id: 'org_1' }, team: null } as unknown as GatewayCall['auth'],
    model: modelId,
    request: options.request ?? { model: modelId, messages: [{ role: 'user', content: 'hi' }] },
    stream: options.stream ?? false,
    includeUsage: false,
    user: undefined,
    signal: options.signal ?? new AbortController().signal,
    startedAt: 0,
    record: { headers: {} },
  };
}

const ok = (body: unknown = { ok: true }): Promise<Outcome> => Promise.resolve({ kind: 'json', body });
const fail = (code: ConstructorParameters<typeof GatewayError>[0], details?: Record<string, unknown>) =>
  Promise.reject(new GatewayError(code, `fake ${code}`, { provider: 'fake', details }));

async function* events(items: StreamEvent[], failAfter?: number): AsyncGenerator<StreamEvent> {
  for (const [index, item] of items.entries()) {
    if (failAfter !== undefined && index === failAfter) throw new GatewayError('upstream_unavailable', 'dropped');
    yield item;
  }
}

function setup(
  models: ModelRoute[],
  behaviours: Record<string, Behaviour>,
  options: { random?: number; circuit?: Parameters<typeof createMemoryCircuitStore>[0]; inProcess?: boolean } = {},
) {
  const fake = scriptedProvider(behaviours);
  if (options.inProcess) Object.assign(fake.provider, { inProcess: true });
  const time = fakeClock();
  const eventBus = createEventBus();
  const published: GatewayEvent[] = [];
  eventBus.subscribe((event) => published.push(event));
  let wall = 1_000_000;
  const breaker = createCircuitBreaker({ store: createMemoryCircuitStore(options.circuit), eventBus, now: () => wall });
  const router = createRouter({
    catalog: staticCatalog(models),
    providers: new Map([['fake', fake.provider]]),
    breaker,
    health: createMemoryHealthStore(),
    eventBus,
    clock: time.clock,
    random: () => options.random ?? 0.5,
    retryPolicy: { baseDelayMs: 100, maxDelayMs: 1000 },
  });
  const flush = () => new Promise((resolve) => setImmediate(resolve));
  return { router, fake, time, published, flush, advanceWall: (ms: number) => (wall += ms) };
}

describe('router: failover and retries', () => {
  test('fails over to the next deployment at once, and names the one that served', async () => {
    const { router, fake, time } = setup([model('m', [deployment('a', 'm', { priority: 0 }), deployment('b', 'm', { priority: 1 })])], {
      a: () => fail('upstream_unavailable'),
      b: () => ok({ from: 'b' }),
    });
    const call = fakeCall('m');
    const outcome = await router.route(call);
    assert.deepEqual(outcome, { kind: 'json', body: { from: 'b' } });
    assert.equal(call.record.headers['x-gw-route'], 'b;attempts=2');
    assert.equal(call.record.deploymentId, 'b');
    assert.equal(call.record.attempts, 2);
    assert.deepEqual(time.sleeps, []);
    assert.equal(fake.count('a'), 1);
  });

  test('every upstream attempt is published as an "attempt" call step (observability/call-steps.ts)', async () => {
    const { router } = setup([model('m', [deployment('a', 'm', { priority: 0 }), deployment('b', 'm', { priority: 1 })])], {
      a: () => fail('upstream_unavailable'),
      b: () => ok(),
    });
    const steps: CallStep[] = [];
    const listener = (message: unknown) => steps.push(message as CallStep);
    subscribe(CALL_STEP_CHANNEL, listener);
    try {
      await router.route(fakeCall('m'));
    } finally {
      unsubscribe(CALL_STEP_CHANNEL, listener);
    }
    assert.deepEqual(steps.map((step) => [step.requestId, step.step]), [['req_test', 'attempt'], ['req_test', 'attempt']]);
  });

  test('retries one deployment with exponential backoff and full jitter', async () => {
    const { router, fake, time } = setup([model('m', [deployment('a', 'm')])], {
      a: (_invocation, attempt) => (attempt < 3 ? fail('upstream_timeout') : ok()),
    });
    const call = fakeCall('m');
    await router.route(call);
    assert.equal(fake.count('a'), 3);
    // random 0.5 × min(1000, 100·2^(r−1)): 50 then 100.
    assert.deepEqual(time.sleeps, [50, 100]);
    assert.equal(call.record.headers['x-gw-route'], 'a;attempts=3');
  });

  test('gives up after maxRetries and publishes llm.error with the final error', async () => {
    const { router, fake, published, flush } = setup([model('m', [deployment('a', 'm')])], {
      a: () => fail('upstream_bad_response'),
    });
    await assert.rejects(router.route(fakeCall('m')), (error: GatewayError) => error.code === 'upstream_bad_response' && error.status === 502);
    assert.equal(fake.count('a'), 3);
    await flush();
    const event = published.find((item) => item.kind === 'llm.error');
    assert.ok(event);
    assert.deepEqual(event.details, {
      model: 'm',
      request_id: 'req_test',
      key_alias: 'sk-...abcd',
      org_id: 'org_1',
      error_code: 'upstream_bad_response',
      provider: 'fake',
    });
  });

  test('honours Retry-After over a shorter backoff', async () => {
    const { router, time } = setup([model('m', [deployment('a', 'm')])], {
      a: (_invocation, attempt) => (attempt === 1 ? fail('upstream_rate_limited', { retry_after_seconds: 2 }) : ok()),
    });
    await router.route(fakeCall('m'));
    assert.deepEqual(time.sleeps, [2000]);
  });

  test('does not wait for a Retry-After beyond the policy bound', async () => {
    const { router, fake } = setup([model('m', [deployment('a', 'm')])], {
      a: () => fail('upstream_rate_limited', { retry_after_seconds: 3600 }),
    });
    await assert.rejects(router.route(fakeCall('m')), (error: GatewayError) => error.status === 429);
    assert.equal(fake.count('a'), 1);
  });

  test('never retries or fails over a non-retryable error', async () => {
    const { router, fake } = setup([model('m', [deployment('a', 'm'), deployment('b', 'm', { priority: 1 })])], {
      a: () => fail('upstream_bad_request'),
      b: () => ok(),
    });
    await assert.rejects(router.route(fakeCall('m')), (error: GatewayError) => error.code === 'upstream_bad_request' && error.status === 400);
    assert.equal(fake.count('a'), 1);
    assert.equal(fake.count('b'), 0);
  });

  test('unknown model is 404; a model without the operation is 400', async () => {
    const { router } = setup([model('m', [deployment('a', 'm')])], { a: () => ok() });
    await assert.rejects(router.route(fakeCall('nope')), (error: GatewayError) => error.status === 404 && error.code === 'model_not_found');
    const embeddingCall = { ...fakeCall('m'), operation: 'embedding' as const };
    await assert.rejects(router.route(embeddingCall), (error: GatewayError) => error.code === 'unsupported_model');
  });

  test('strips gw_* fields before the provider sees the request', async () => {
    const { router, fake } = setup([model('m', [deployment('a', 'm')])], { a: () => ok() });
    await router.route(fakeCall('m', { request: { model: 'm', messages: [], gw_cache: true, gw_prompt_variables: { x: 1 } } }));
    assert.deepEqual(fake.calls[0]!.call.request, { model: 'm', messages: [] });
    assert.equal(fake.calls[0]!.target.apiKey, 'key-a');
  });
});

describe('router: fallbacks', () => {
  const models = () => [
    model('primary', [deployment('p', 'primary')], {
      fallbacks: [
        { model: 'filtered-only', on: ['content_filtered'] },
        { model: 'backup', on: ['rate_limited'] },
      ],
    }),
    model('filtered-only', [deployment('f', 'filtered-only')]),
    model('backup', [deployment('k', 'backup')]),
  ];

  test('takes the first fallback whose rule matches the failure', async () => {
    const { router, fake } = setup(models(), {
      p: () => fail('upstream_rate_limited'),
      f: () => ok({ from: 'f' }),
      k: (invocation) => ok({ from: 'k', model: invocation.call.model, requestModel: invocation.call.request.model }),
    });
    const call = fakeCall('primary');
    const outcome = await router.route(call);
    assert.deepEqual(outcome, { kind: 'json', body: { from: 'k', model: 'backup', requestModel: 'backup' } });
    assert.equal(fake.count('p'), 3);
    assert.equal(fake.count('f'), 0);
    assert.equal(call.record.headers['x-gw-route'], 'k;attempts=4;fallback=backup');
  });

  test('a non-retryable content filter goes straight to the matching fallback', async () => {
    const { router, fake } = setup(models(), {
      p: () => fail('content_filtered'),
      f: () => ok({ from: 'f' }),
      k: () => ok({ from: 'k' }),
    });
    const outcome = await router.route(fakeCall('primary'));
    assert.deepEqual(outcome, { kind: 'json', body: { from: 'f' } });
    assert.equal(fake.count('p'), 1);
  });

  test('no rule matches: the primary error is returned', async () => {
    const { router, fake } = setup(models(), {
      p: () => fail('upstream_unavailable'),
      f: () => ok(),
      k: () => ok(),
    });
    await assert.rejects(router.route(fakeCall('primary')), (error: GatewayError) => error.status === 503);
    assert.equal(fake.count('f') + fake.count('k'), 0);
  });
});

describe('router: circuit breaker', () => {
  test('opens after consecutive failures, announces the outage, skips, probes and closes', async () => {
    let healthy = false;
    const { router, fake, published, flush, advanceWall } = setup(
      [model('m', [deployment('a', 'm'), deployment('b', 'm', { priority: 1 })])],
      { a: () => (healthy ? ok({ from: 'a' }) : fail('upstream_unavailable')), b: () => ok({ from: 'b' }) },
      { circuit: { consecutiveFailures: 3, coolDownMs: 10_000 } },
    );
    for (let index = 0; index < 3; index += 1) await router.route(fakeCall('m'));
    assert.equal(fake.count('a'), 3);
    await flush();
    const outage = published.filter((event) => event.kind === 'provider.outage');
    assert.equal(outage.length, 1);
    assert.deepEqual(outage[0]!.details, { model: 'm', deployment_id: 'a', provider: 'fake', reason: 'upstream_unavailable' });

    const skipped = fakeCall('m');
    await router.route(skipped);
    assert.equal(fake.count('a'), 3, 'open circuit is skipped');
    assert.equal(skipped.record.headers['x-gw-route'], 'b;attempts=1');
    assert.equal((await router.health()).find((row) => row.deploymentId === 'a')!.circuit, 'open');

    advanceWall(10_000);
    healthy = true;
    const probe = fakeCall('m');
    assert.deepEqual(await router.route(probe), { kind: 'json', body: { from: 'a' } });
    assert.equal(probe.record.headers['x-gw-route'], 'a;attempts=1');
    assert.equal((await router.health()).find((row) => row.deploymentId === 'a')!.circuit, 'closed');
  });

  const circuitOf = async (router: ReturnType<typeof setup>['router'], id: string) => (await router.health()).find((row) => row.deploymentId === id)!.circuit;

  test("one call's retries of a deployment count once: the default threshold is five failing calls", async () => {
    const { router, fake } = setup([model('m', [deployment('a', 'm')])], { a: () => fail('upstream_bad_response') });
    for (let index = 0; index < 4; index += 1) {
      await assert.rejects(router.route(fakeCall('m')), (error: GatewayError) => error.code === 'upstream_bad_response');
    }
    assert.equal(fake.count('a'), 12, 'four calls, each tried three times');
    assert.equal(await circuitOf(router, 'a'), 'closed');
    await assert.rejects(router.route(fakeCall('m')), (error: GatewayError) => error.code === 'upstream_bad_response');
    assert.equal(await circuitOf(router, 'a'), 'open');
    assert.equal(fake.count('a'), 13, 'the fifth failing call opened it; its retries were not sent');
  });

  test('429s never open the circuit, and a rate-limited answer resets the failure count', async () => {
    let answer: 'rate_limited' | 'down' = 'rate_limited';
    const { router, fake } = setup(
      [model('m', [deployment('a', 'm')])],
      { a: () => fail(answer === 'down' ? 'upstream_unavailable' : 'upstream_rate_limited', { retry_after_seconds: 0 }) },
      { circuit: { consecutiveFailures: 2, failureRate: 0.5, minimumCalls: 2 } },
    );
    for (let index = 0; index < 5; index += 1) {
      await assert.rejects(router.route(fakeCall('m')), (error: GatewayError) => error.status === 429);
    }
    assert.equal(await circuitOf(router, 'a'), 'closed');
    assert.equal(fake.count('a'), 15, 'every call still reaches the deployment');

    answer = 'down';
    await assert.rejects(router.route(fakeCall('m')), (error: GatewayError) => error.status === 503);
    answer = 'rate_limited';
    await assert.rejects(router.route(fakeCall('m')), (error: GatewayError) => error.status === 429);
    answer = 'down';
    await assert.rejects(router.route(fakeCall('m')), (error: GatewayError) => error.status === 503);
    assert.equal(await circuitOf(router, 'a'), 'closed', 'the 429 in between broke the run of failures');
  });

  test('client-caused 4xx never open the circuit', async () => {
    const { router, fake } = setup([model('m', [deployment('a', 'm')])], { a: () => fail('upstream_bad_request') }, { circuit: { consecutiveFailures: 1 } });
    for (let index = 0; index < 3; index += 1) {
      await assert.rejects(router.route(fakeCall('m')), (error: GatewayError) => error.status === 400);
    }
    assert.equal(fake.count('a'), 3);
    assert.equal(await circuitOf(router, 'a'), 'closed');
  });

  test('a provider running in process keeps no circuit: its failures come from the request', async () => {
    let status: 'fail' | 'bad' = 'fail';
    const { router, fake } = setup(
      [model('m', [deployment('a', 'm')])],
      { a: () => (status === 'fail' ? fail('upstream_unavailable') : fail('upstream_bad_request')) },
      { circuit: { consecutiveFailures: 1 }, inProcess: true },
    );
    await assert.rejects(router.route(fakeCall('m')), (error: GatewayError) => error.status === 503);
    await assert.rejects(router.route(fakeCall('m')), (error: GatewayError) => error.status === 503);
    status = 'bad';
    await assert.rejects(router.route(fakeCall('m')), (error: GatewayError) => error.status === 400 && error.code === 'upstream_bad_request');
    assert.equal(fake.count('a'), 7);
    assert.equal(await circuitOf(router, 'a'), 'closed');
  });

  test('every circuit open: 503 upstream_unavailable without calling anyone', async () => {
    const { router, fake } = setup([model('m', [deployment('a', 'm')])], { a: () => fail('upstream_timeout') }, {
      circuit: { consecutiveFailures: 1, coolDownMs: 60_000 },
    });
    await assert.rejects(router.route(fakeCall('m')), (error: GatewayError) => error.status === 504);
    assert.equal(fake.count('a'), 1);
    await assert.rejects(router.route(fakeCall('m')), (error: GatewayError) => error.code === 'upstream_unavailable' && error.status === 503);
    assert.equal(fake.count('a'), 1);
  });
});

describe('router: streams and timeouts', () => {
  const chunk = (text: string): StreamEvent => ({ raw: JSON.stringify({ choices: [{ delta: { content: text } }] }) });

  test('a stream failing before its first event is retried; the client sees each event once', async () => {
    const { router, fake } = setup([model('m', [deployment('a', 'm')])], {
      a: async (_invocation, attempt) => ({ kind: 'stream', events: events([chunk('x'), chunk('y')], attempt === 1 ? 0 : undefined) }),
    });
    const outcome = await router.route(fakeCall('m', { stream: true }));
    assert.equal(outcome.kind, 'stream');
    const seen: string[] = [];
    for await (const event of (outcome as { events: AsyncIterable<StreamEvent> }).events) seen.push(event.raw!);
    assert.deepEqual(seen, [chunk('x').raw, chunk('y').raw]);
    assert.equal(fake.count('a'), 2);
  });

  test('a stream failing after its first event ends with a GatewayError and is not retried', async () => {
    const { router, fake, published, flush } = setup([model('m', [deployment('a', 'm'), deployment('b', 'm', { priority: 1 })])], {
      a: async () => ({ kind: 'stream', events: events([chunk('x'), chunk('y'), chunk('z')], 1) }),
      b: () => ok(),
    });
    const call = fakeCall('m', { stream: true });
    const outcome = (await router.route(call)) as { events: AsyncIterable<StreamEvent> };
    const seen: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const event of outcome.events) seen.push(event.raw!);
      })(),
      (error: GatewayError) => error.code === 'upstream_unavailable',
    );
    assert.deepEqual(seen, [chunk('x').raw]);
    assert.equal(fake.count('a'), 1);
    assert.equal(fake.count('b'), 0);
    await flush();
    assert.equal(published.filter((event) => event.kind === 'llm.error').length, 1);
    assert.equal(call.record.errorCode, 'upstream_unavailable');
  });

  test('an empty stream is a bad response (502) and fails over', async () => {
    const { router } = setup([model('m', [deployment('a', 'm'), deployment('b', 'm', { priority: 1 })])], {
      a: async () => ({ kind: 'stream', events: events([]) }),
      b: async () => ({ kind: 'stream', events: events([chunk('b')]) }),
    });
    const call = fakeCall('m', { stream: true });
    await router.route(call);
    assert.equal(call.record.headers['x-gw-route'], 'b;attempts=2');
  });

  test('first-byte timeout of a hanging stream maps to 504 upstream_timeout', async () => {
    const hang: Behaviour = async (invocation) => ({
      kind: 'stream',
      events: (async function* () {
        await new Promise((_resolve, reject) => invocation.signal.addEventListener('abort', () => reject(invocation.signal.reason)));
        yield chunk('never');
      })(),
    });
    const timeouts = { connectMs: 1000, firstByteMs: 20, totalMs: 5000 };
    const { router, fake } = setup([model('m', [deployment('a', 'm', { timeouts })])], { a: hang });
    await assert.rejects(router.route(fakeCall('m', { stream: true })), (error: GatewayError) => error.code === 'upstream_timeout' && error.status === 504);
    assert.equal(fake.count('a'), 3);
  });

  test('total timeout of a provider that ignores the signal maps to 504', async () => {
    const { router } = setup([model('m', [deployment('a', 'm', { timeouts: { connectMs: 10, firstByteMs: 10, totalMs: 20 } })])], {
      a: () => new Promise(() => {}),
    });
    await assert.rejects(router.route(fakeCall('m')), (error: GatewayError) => error.status === 504);
  });

  test('the provider answering 408 stays 408', async () => {
    const { router } = setup([model('m', [deployment('a', 'm')])], { a: () => fail('upstream_request_timeout') });
    await assert.rejects(router.route(fakeCall('m')), (error: GatewayError) => error.status === 408);
  });

  test('a non-gateway error from a provider is a 502 bad response; a refused connection a 503', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const { router } = setup([model('m', [deployment('a', 'm')]), model('n', [deployment('b', 'n')])], {
      a: () => Promise.reject(new SyntaxError('Unexpected token')),
      b: () => Promise.reject(new TypeError('fetch failed', { cause: refused })),
    });
    await assert.rejects(router.route(fakeCall('m')), (error: GatewayError) => error.status === 502);
    await assert.rejects(router.route(fakeCall('n')), (error: GatewayError) => error.status === 503);
  });

  test('client abort stops retrying and does not count against the deployment', async () => {
    const controller = new AbortController();
    const { router, fake, router: { health } } = setup([model('m', [deployment('a', 'm')])], {
      a: () => {
        controller.abort();
        return fail('upstream_unavailable');
      },
    });
    await assert.rejects(router.route(fakeCall('m', { signal: controller.signal })));
    assert.equal(fake.count('a'), 1);
    const row = (await health()).find((item) => item.deploymentId === 'a')!;
    assert.equal(row.consecutiveFailures, 0);
  });
});
