import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { test } from 'node:test';
import { fakeCall } from '../../test/features/fake-gateway-call.js';
import { deferred, nextTurn } from '../../test/helpers/deferred.js';
import { createAdmissionGateStage, withAdmissionCheck } from '../pipeline/admission.js';
import { composeStages } from '../pipeline/compose-stages.js';
import type { Stage } from '../pipeline/stage.js';
import { CALL_STEP_CHANNEL, type CallStep } from './call-steps.js';
import { testTarget } from '../../test/fakes/fixture-files.js';
import { buildServer } from '../http/build-server.js';
import { createInferenceHandler } from '../http/inference-handler.js';
import type { EarlyAuthentication, KeyAuthenticator } from '../keys/key-authenticator.js';
import { chatRequestSchema } from '../protocol/chat.js';
import { createCompatibleAdapter } from '../providers/compatible/compatible-adapter.js';
import { createHttpProvider } from '../providers/http/create-http-provider.js';
import type { UpstreamClient } from '../providers/http/upstream-client.js';
import { findCompatiblePreset } from '../providers/openai/presets.js';
import type { AuthContext } from '../tenancy/tenancy-types.js';
import type { RequestRecorder } from './request-recorder.js';

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

test('call steps: an answer read whole is marked as read, translated, being written and handed to the socket, in that order', async () => {
  const answer = JSON.stringify({ id: 'c', object: 'chat.completion', model: 'upstream-model', choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } });
  const client: UpstreamClient = {
    send: async () => {
      throw new Error('not streamed');
    },
    sendBuffered: async () => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(answer) }),
    close: async () => {},
  };
  const provider = createHttpProvider(createCompatibleAdapter(findCompatiblePreset('openai')!), client);
  const keys = {
    async authenticateEarly(): Promise<EarlyAuthentication> {
      return { auth: { key: { id: 'k', alias: 'a', role: 'inference' }, org: { id: 'o', settings: {} }, team: null } as unknown as AuthContext, current: undefined };
    },
    markUsed() {},
  } as unknown as KeyAuthenticator;
  const app = await buildServer({ bodyLimitBytes: 1 << 20, fileLimitBytes: 1 << 20, logLevel: 'silent', version: 'test' });
  app.post(
    '/v1/chat/completions',
    createInferenceHandler(
      {
        operation: 'chat',
        schema: chatRequestSchema,
        identityHeaders: false,
        pipeline: (call) => provider.invoke({ call, target: testTarget({ provider: 'openai' }), signal: call.signal }),
      },
      { keys, models: { has: () => true, supports: () => true }, recorder: { record() {} } as unknown as RequestRecorder, logMessageContents: false, inflight: { add() {}, done() {} } },
    ),
  );
  try {
    let status = 0;
    const steps = await stepsDuring(async () => {
      const reply = await app.inject({ method: 'POST', url: '/v1/chat/completions', payload: { model: 'public-model', messages: [{ role: 'user', content: 'hi' }] } });
      status = reply.statusCode;
    });
    assert.equal(status, 200);
    assert.deepEqual(
      steps.map((step) => step.step),
      ['answer read', 'answer translated', 'answer writing', 'answer handed to the socket'],
    );
    assert.equal(new Set(steps.map((step) => step.requestId)).size, 1, 'all steps name the one call');
    for (let index = 1; index < steps.length; index++) assert.ok(steps[index]!.at >= steps[index - 1]!.at, 'times in order');
  } finally {
    await app.close();
  }
});
