import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { test } from 'node:test';
import { fakeCall } from '../../test/features/fake-gateway-call.js';
import { deferred, nextTurn } from '../../test/helpers/deferred.js';
import { createAdmissionGateStage, withAdmissionCheck } from '../pipeline/admission.js';
import { composeStages } from '../pipeline/compose-stages.js';
import type { Stage } from '../pipeline/stage.js';
import { CALL_STEP_CHANNEL, type CallStep } from './call-steps.js';

function checkingStage(name: string, check: Promise<void>): Stage {
  return { name, run: (call, next) => next(withAdmissionCheck(call, check)) };
}

/** Collects the call steps published while `body` runs. */
async function stepsDuring(body: (steps: CallStep[]) => Promise<void>): Promise<CallStep[]> {
  const steps: CallStep[] = [];
  const listener = (message: unknown) => steps.push(message as CallStep);
  subscribe(CALL_STEP_CHANNEL, listener);
  try {
    await body(steps);
  } finally {
    unsubscribe(CALL_STEP_CHANNEL, listener);
  }
  return steps;
}

test('call steps: each stage start, then "admitted" only once every admission check passed', async () => {
  const rateLimit = deferred();
  const call = fakeCall({ request: { model: 'm' } });
  const pipeline = composeStages([checkingStage('rate-limit', rateLimit.promise), { name: 'meter', run: (each, next) => next(each) }, createAdmissionGateStage()], async () => ({ kind: 'json', body: {} }));
  const steps = await stepsDuring(async (seen) => {
    const running = pipeline(call);
    await nextTurn();
    assert.deepEqual(seen.map((step) => step.step), ['stage:rate-limit', 'stage:meter', 'stage:admission-gate'], 'not admitted while the check is open');
    rateLimit.pass();
    await running;
  });
  assert.deepEqual(steps.map((step) => step.step), ['stage:rate-limit', 'stage:meter', 'stage:admission-gate', 'admitted']);
  assert.ok(steps.every((step) => step.requestId === call.requestId));
  for (let index = 1; index < steps.length; index++) assert.ok(steps[index]!.at >= steps[index - 1]!.at, 'times in order');
});

test('call steps: a refused admission publishes no "admitted"', async () => {
  const refusal = new Error('rate limited');
  const pipeline = composeStages([checkingStage('rate-limit', Promise.reject(refusal)), createAdmissionGateStage()], async () => ({ kind: 'json', body: {} }));
  const steps = await stepsDuring(async () => {
    await assert.rejects(pipeline(fakeCall({ request: { model: 'm' } })), refusal);
  });
  assert.deepEqual(steps.map((step) => step.step), ['stage:rate-limit', 'stage:admission-gate']);
});

test('call steps: a call with no check in flight (the embedded stores answer at once) is admitted at the gate', async () => {
  const pipeline = composeStages([createAdmissionGateStage()], async () => ({ kind: 'json', body: {} }));
  const steps = await stepsDuring(async () => {
    await pipeline(fakeCall({ request: { model: 'm' } }));
  });
  assert.deepEqual(steps.map((step) => step.step), ['stage:admission-gate', 'admitted']);
});
