import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayError } from '../errors/gateway-error.js';
import type { EarlyAuthentication, KeyAuthenticator } from '../keys/key-authenticator.js';
import { createKeyConfirmationStage } from '../keys/key-confirmation-stage.js';
import type { RequestLogEntry, RequestRecorder } from '../observability/request-recorder.js';
import { createAdmissionGateStage } from '../pipeline/admission.js';
import { composeStages } from '../pipeline/compose-stages.js';
import type { GatewayCall } from '../pipeline/stage.js';
import { chatRequestSchema } from '../protocol/chat.js';
import type { AuthContext } from '../tenancy/tenancy-types.js';
import { buildServer } from './build-server.js';
import { createInferenceHandler } from './inference-handler.js';

const TOKEN = 'sk-gw-' + 'T'.repeat(40);

function authContext(alias: string, allowedModels: string[] | null = null): AuthContext {
  return {
    key: { id: 'key-1', alias, role: 'inference', status: 'active', allowedModels },
    org: { id: 'org-1', enabledModels: null, settings: { logMessageContents: false } },
    team: null,
  } as unknown as AuthContext;
}

/**
 * The edge with a key cache whose entry is `cached` and whose fresh lookup gives `fresh` (or a 401),
 * a pipeline of the key-confirmation stage and the admission gate, and a terminal that records what reached it.
 */
async function edge(cached: AuthContext, current: boolean, fresh: AuthContext | undefined) {
  const reached: GatewayCall[] = [];
  const recorded: RequestLogEntry[] = [];
  let freshLookups = 0;
  const keys = {
    async authenticateEarly(): Promise<EarlyAuthentication> {
      return { auth: cached, current: Promise.resolve(current) };
    },
    async authenticate() {
      freshLookups++;
      if (!fresh) throw new GatewayError('invalid_api_key', 'Invalid API key.');
      return fresh;
    },
    markUsed() {},
  } as unknown as KeyAuthenticator;
  const recorder = { record: (entry: RequestLogEntry) => void recorded.push(entry) } as unknown as RequestRecorder;
  const pipeline = composeStages([createKeyConfirmationStage(), createAdmissionGateStage()], async (call) => {
    reached.push(call);
    return { kind: 'json', body: { answered_for: call.auth.key.alias } };
  });
  const app = await buildServer({ bodyLimitBytes: 1 << 20, fileLimitBytes: 1 << 20, logLevel: 'silent', version: 'test' });
  app.post(
    '/v1/chat/completions',
    createInferenceHandler(
      { operation: 'chat', schema: chatRequestSchema, pipeline, identityHeaders: true },
      {
        keys,
        models: { has: () => true, supports: () => true },
        recorder,
        logMessageContents: false,
        inflight: { add() {}, done() {} },
      },
    ),
  );
  const call = async (payload: unknown) => {
    const reply = await app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${TOKEN}` }, payload: payload as object });
    return { status: reply.statusCode, body: reply.json(), headers: reply.headers };
  };
  return { call, reached, recorded, freshLookups: () => freshLookups, close: () => app.close() };
}

const CHAT = { model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] };

test('inference edge: a cached key confirmed current is served without a fresh lookup', async () => {
  const gateway = await edge(authContext('cached'), true, authContext('fresh'));
  const reply = await gateway.call(CHAT);
  assert.equal(reply.status, 200);
  assert.deepEqual(reply.body, { answered_for: 'cached' });
  assert.equal(gateway.freshLookups(), 0);
  await gateway.close();
});

test('inference edge: a cached key revoked meanwhile gets 401, and nothing passes the confirmation', async () => {
  const gateway = await edge(authContext('cached'), false, undefined);
  const reply = await gateway.call(CHAT);
  assert.equal(reply.status, 401);
  assert.equal(reply.body.error.code, 'invalid_api_key');
  assert.equal(gateway.reached.length, 0);
  assert.equal(gateway.recorded.length, 1, 'one request log row for the call');
  assert.equal(gateway.recorded[0]!.status, 401);
  await gateway.close();
});

test('inference edge: an earlier refusal on a stale cached key waits for the confirmation (401, not 400 or 403)', async () => {
  const revoked = await edge(authContext('cached'), false, undefined);
  assert.equal((await revoked.call({ model: 'fake-chat' })).status, 401, 'a bad body from a revoked key');
  await revoked.close();
  // The cached key could not use the model; its fresh settings allow it: served, with the fresh key.
  const widened = await edge(authContext('cached', ['other-model']), false, authContext('fresh'));
  const reply = await widened.call(CHAT);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.deepEqual(reply.body, { answered_for: 'fresh' });
  assert.equal(reply.headers['x-gw-key-alias'], 'fresh');
  assert.equal(widened.reached.length, 1);
  await widened.close();
});

test('inference edge: a refusal on a key confirmed current is answered as it is', async () => {
  const gateway = await edge(authContext('cached', ['other-model']), true, authContext('fresh'));
  const reply = await gateway.call(CHAT);
  assert.equal(reply.status, 403);
  assert.equal(gateway.freshLookups(), 0);
  await gateway.close();
});
