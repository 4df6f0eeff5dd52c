import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fakeCall } from '../../test/features/fake-gateway-call.js';
import { deferred, nextTurn } from '../../test/helpers/deferred.js';
import { admitted, createAdmissionGateStage, createUpstreamOverlap, withAdmissionCheck, type UpstreamOverlap } from './admission.js';
import { composeStages } from './compose-stages.js';
import type { GatewayCall, Outcome, Stage, StreamEvent } from './stage.js';
import type { CallSignal } from '../lib/call-signal.js';
import { GatewayError } from '../errors/gateway-error.js';

/** A stage that adds `check` to the call's admission and notes that the call went past it. */
function checking(check: Promise<void>, passed: string[], name: string): Stage {
  return {
    name,
    run(call, next) {
      passed.push(name);
      return next(withAdmissionCheck(call, check));
    },
  };
}

test('admission: stages run on while checks are in flight; the gate holds the router until all pass', async () => {
  const first = deferred();
  const second = deferred();
  const passed: string[] = [];
  const reached: GatewayCall[] = [];
  const pipeline = composeStages([checking(first.promise, passed, 'a'), checking(second.promise, passed, 'b'), createAdmissionGateStage()], async (call) => {
    reached.push(call);
    return { kind: 'json', body: {} };
  });
  const running = pipeline(fakeCall({ request: { model: 'm' } }));
  await nextTurn();
  assert.deepEqual(passed, ['a', 'b'], 'both checks were started without waiting');
  assert.equal(reached.length, 0);
  second.pass();
  await nextTurn();
  assert.equal(reached.length, 0, 'one check still open');
  first.pass();
  await running;
  assert.equal(reached.length, 1);
});

test('admission: a refused check never reaches the router; the earliest check refusing wins', async () => {
  const first = deferred();
  const second = deferred();
  let reached = 0;
  const pipeline = composeStages([checking(first.promise, [], 'a'), checking(second.promise, [], 'b'), createAdmissionGateStage()], async () => {
    reached++;
    return { kind: 'json', body: {} };
  });
  const running = pipeline(fakeCall({ request: { model: 'm' } }));
  // The later check refuses first; the earlier one refuses too: the client sees the earlier one.
  second.refuse(new Error('rate limited'));
  await nextTurn();
  first.refuse(new Error('stale key'));
  await assert.rejects(running, /stale key/);
  assert.equal(reached, 0);
});

test('admission: a call without checks is admitted at once', async () => {
  await admitted(fakeCall({ request: { model: 'm' } }));
  let reached = 0;
  const pipeline = composeStages([createAdmissionGateStage()], async () => {
    reached++;
    return { kind: 'json', body: {} };
  });
  await pipeline(fakeCall({ request: { model: 'm' } }));
  assert.equal(reached, 1);
});

test('admission: a refusal nobody waits for (a stage failed first) is not an unhandled rejection', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  const check = deferred();
  const failing: Stage = {
    name: 'failing',
    run() {
      return Promise.reject(new Error('the stage failed on its own'));
    },
  };
  const pipeline = composeStages([checking(check.promise, [], 'a'), failing, createAdmissionGateStage()], async () => ({ kind: 'json', body: {} }));
  await assert.rejects(pipeline(fakeCall({ request: { model: 'm' } })), /on its own/);
  check.refuse(new Error('rate limited'));
  await nextTurn();
  await nextTurn();
  process.off('unhandledRejection', onUnhandled);
  assert.deepEqual(unhandled, []);
});

/** A router stand-in that records what reached it and answers when told to. */
function upstreamStandIn(outcome: Outcome = { kind: 'json', body: { ok: true } }) {
  const reached: GatewayCall[] = [];
  const answer = deferred();
  const router = async (call: GatewayCall): Promise<Outcome> => {
    reached.push(call);
    // As the router does: a cut call settles at once.
    await new Promise<void>((resolve, reject) => {
      call.signal.addEventListener('abort', () => reject(call.signal.reason), { once: true });
      answer.promise.then(resolve);
    });
    return outcome;
  };
  return { reached, answer, router };
}

function overlapping(check: Promise<void>, overlap: UpstreamOverlap, router: (call: GatewayCall) => Promise<Outcome>) {
  return composeStages([checking(check, [], 'a'), createAdmissionGateStage({ overlap })], router);
}

test('overlap: the upstream request leaves before admission answered, and its answer waits for admission', async () => {
  const check = deferred();
  const { reached, answer, router } = upstreamStandIn();
  let settled = false;
  const running = overlapping(check.promise, createUpstreamOverlap(), router)(fakeCall({ request: { model: 'm' } }));
  running.then(() => (settled = true), () => (settled = true));
  await nextTurn();
  assert.equal(reached.length, 1, 'sent upstream while admission is open');
  answer.pass();
  await nextTurn();
  assert.equal(settled, false, 'the answer is held until admission passes');
  check.pass();
  assert.deepEqual(await running, { kind: 'json', body: { ok: true } });
});

test('overlap: a refusal cancels the upstream request, answers the refusal, and the key then waits for admission', async () => {
  let clock = 1_000;
  const overlap = createUpstreamOverlap({ cautionMs: 60_000, now: () => clock });
  const { reached, router } = upstreamStandIn();
  const signals: CallSignal[] = [];
  const recordingRouter = (call: GatewayCall) => {
    signals.push(call.signal);
    return router(call);
  };
  const check = deferred();
  const running = overlapping(check.promise, overlap, recordingRouter)(fakeCall({ request: { model: 'm' } }));
  await nextTurn();
  assert.equal(reached.length, 1);
  check.refuse(new GatewayError('rate_limit_exceeded', 'rate limited'));
  await assert.rejects(running, /rate limited/);
  assert.equal(signals[0].aborted, true, 'the upstream request was cancelled');
  assert.equal(signals[0].reason instanceof Error && signals[0].reason.name, 'AdmissionRefused', 'cancelled as a call nobody waits for, not as a gateway error');

  // The same key, within the caution period: the next call waits for admission before going upstream.
  const next = deferred();
  const waiting = overlapping(next.promise, overlap, recordingRouter)(fakeCall({ request: { model: 'm' } }));
  await nextTurn();
  assert.equal(reached.length, 1, 'not sent before admission');
  next.refuse(new GatewayError('rate_limit_exceeded', 'still limited'));
  await assert.rejects(waiting, /still limited/);
  assert.equal(reached.length, 1);

  // Another key of the same org still overlaps until it is refused itself.
  const sameOrg = fakeCall({ request: { model: 'm' } });
  assert.equal(overlap.allows({ ...sameOrg, auth: { ...sameOrg.auth, key: { ...sameOrg.auth.key, id: 'another-key' } } }), true);
  // Once the caution period passed, the key overlaps again.
  clock += 60_001;
  assert.equal(overlap.allows(fakeCall({ request: { model: 'm' } })), true);
});

test('overlap: while the shared stores are unreachable no call overlaps; once they are back, calls overlap again', async () => {
  let reachable = false;
  const overlap = createUpstreamOverlap({ storesReachable: () => reachable });
  const { reached, router } = upstreamStandIn();
  const check = deferred();
  const waiting = overlapping(check.promise, overlap, router)(fakeCall({ request: { model: 'm' } }));
  await nextTurn();
  assert.equal(reached.length, 0, 'not sent upstream while the stores are down');
  check.refuse(new GatewayError('credit_check_failed', 'stores down'));
  await assert.rejects(waiting, /stores down/);
  assert.equal(reached.length, 0);
  reachable = true;
  assert.equal(overlap.allows(fakeCall({ request: { model: 'm' }, orgId: 'org-other' })), true, 'a key not refused meanwhile overlaps');
});

test('overlap: a refusal discards a stream answer that already arrived, and wins over an upstream failure', async () => {
  let closed = false;
  async function* events(): AsyncGenerator<StreamEvent> {
    try {
      yield { raw: '{}' };
    } finally {
      closed = true;
    }
  }
  const stream: Outcome = { kind: 'stream', events: events() };
  const check = deferred();
  const { answer, router } = upstreamStandIn(stream);
  const running = overlapping(check.promise, createUpstreamOverlap(), router)(fakeCall({ request: { model: 'm', stream: true } }));
  answer.pass();
  await nextTurn();
  check.refuse(new Error('revoked'));
  await assert.rejects(running, /revoked/);
  await nextTurn();
  assert.equal(closed, true, 'the stream was closed (its cleanup ran)');

  const failing = deferred();
  const failed = overlapping(failing.promise, createUpstreamOverlap(), async () => {
    throw new Error('upstream failed');
  })(fakeCall({ request: { model: 'm' } }));
  await nextTurn();
  failing.refuse(new Error('out of credit'));
  await assert.rejects(failed, /out of credit/, 'the refusal is what the client sees');

  const passing = deferred();
  const upstreamError = overlapping(passing.promise, createUpstreamOverlap(), async () => {
    throw new Error('upstream failed');
  })(fakeCall({ request: { model: 'm' } }));
  await nextTurn();
  passing.pass();
  await assert.rejects(upstreamError, /upstream failed/, 'admitted: the upstream failure is answered');
});

test('overlap: only chat, completions and embeddings overlap; other operations wait for admission', async () => {
  const overlap = createUpstreamOverlap();
  for (const operation of ['chat', 'completion', 'embedding'] as const) assert.equal(overlap.allows(fakeCall({ request: { model: 'm' }, operation })), true, operation);
  for (const operation of ['image_generation', 'image_edit', 'speech', 'transcription', 'video', 'moderation', 'rerank', 'ocr'] as const) {
    assert.equal(overlap.allows(fakeCall({ request: { model: 'm' }, operation })), false, operation);
  }
  const check = deferred();
  const { reached, answer, router } = upstreamStandIn();
  answer.pass();
  const running = overlapping(check.promise, overlap, router)(fakeCall({ request: { model: 'm' }, operation: 'image_generation' }));
  await nextTurn();
  assert.equal(reached.length, 0);
  check.pass();
  await running;
  assert.equal(reached.length, 1);
});

test('overlap: a client that leaves while admission is open cancels the upstream request too', async () => {
  const client = new AbortController();
  const check = deferred();
  const signals: CallSignal[] = [];
  const pipeline = overlapping(check.promise, createUpstreamOverlap(), async (call) => {
    signals.push(call.signal);
    return { kind: 'json', body: {} };
  });
  const running = pipeline({ ...fakeCall({ request: { model: 'm' } }), signal: client.signal });
  await nextTurn();
  client.abort(new Error('client left'));
  assert.equal(signals[0].aborted, true);
  check.pass();
  await running;
});

test('overlap: on a refusal, what the router wrote on the record is undone; a stale key does not make its key wait', async () => {
  const overlap = createUpstreamOverlap();
  const check = deferred();
  const call = fakeCall({ request: { model: 'm' } });
  call.record.headers['x-ratelimit-limit-requests'] = '100';
  const pipeline = overlapping(check.promise, overlap, async (routed) => {
    routed.record.deploymentId = 'd1';
    routed.record.attempts = 1;
    routed.record.headers['x-gw-route'] = 'd1;attempts=1';
    return { kind: 'json', body: {} };
  });
  const running = pipeline(call);
  await nextTurn();
  assert.equal(call.record.deploymentId, 'd1', 'the router ran on the call itself');
  // The key turned out stale: the edge starts the call over, and the key is not cautioned for it.
  check.refuse(new Error('the cached key was loaded under an older change version'));
  await assert.rejects(running, /older change version/);
  assert.deepEqual(call.record, { headers: { 'x-ratelimit-limit-requests': '100' } });
  assert.equal(overlap.allows(fakeCall({ request: { model: 'm' } })), true);
});
