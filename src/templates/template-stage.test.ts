import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fakeCall, chatCompletion } from '../../test/features/fake-gateway-call.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { GatewayCall } from '../pipeline/stage.js';
import { createTemplateRenderer } from './render-template.js';
import type { TemplateVersion } from './sql-template-store.js';
import { createTemplateStage } from './template-stage.js';

const models = { has: () => true, supports: () => true };

function stageServing(version: Partial<TemplateVersion>) {
  const stored = { version: 1, messages: [{ role: 'system', content: 'Be {{ tone }}.' }], model: null, parameters: null, ...version } as TemplateVersion;
  return createTemplateStage({ store: { getVersion: async () => stored }, renderer: createTemplateRenderer(), models });
}

async function sent(stage: ReturnType<typeof stageServing>, request: Record<string, unknown>): Promise<GatewayCall> {
  let forwarded: GatewayCall | undefined;
  await stage.run(fakeCall({ request: { model: 'm', messages: [{ role: 'user', content: 'hi' }], gw_prompt_template_id: 'tpl', ...request } }), async (call) => {
    forwarded = call;
    return { kind: 'json', body: chatCompletion('ok') };
  });
  return forwarded!;
}

test('a version\'s parameters fill in what the caller left unset', async () => {
  const stage = stageServing({ parameters: { temperature: 0.2, max_tokens: 50 } });
  const call = await sent(stage, { temperature: 1, gw_prompt_variables: { tone: 'brief' } });
  const request = call.request as Record<string, unknown>;
  assert.equal(request.temperature, 1);
  assert.equal(request.max_tokens, 50);
  assert.deepEqual((request.messages as Array<{ content: string }>).map((message) => message.content), ['Be brief.', 'hi']);
});

test('a stored version with a parameter the chat endpoint refuses is a 400 naming the template, not an upstream call', async () => {
  const stage = stageServing({ version: 3, parameters: { temperature: 'hot' } });
  await assert.rejects(sent(stage, { gw_prompt_variables: { tone: 'brief' } }), (error: unknown) => {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.code, 'invalid_request');
    assert.match(error.message, /tpl \(version 3\) has an invalid parameter temperature/);
    assert.equal(error.param, 'gw_prompt_template_id');
    return true;
  });
});
