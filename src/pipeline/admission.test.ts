import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fakeCall } from '../../test/features/fake-gateway-call.js';
import { deferred, nextTurn } from '../../test/helpers/deferred.js';
import { admitted, createAdmissionGateStage, withAdmissionCheck } from './admission.js';
import { composeStages } from './compose-stages.js';
import type { GatewayCall, Stage } from './stage.js';

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
