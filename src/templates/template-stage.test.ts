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

test('gw_prompt_version pins a version of the named template or of the org default; a pin with no template is a 400', async () => {
  const asked: Array<number | undefined> = [];
  const versions = new Map([
    [1, { templateId: 'tpl', version: 1, messages: [{ role: 'system' as const, content: 'one' }], model: null, parameters: null, createdAt: 0 }],
    [2, { templateId: 'tpl', version: 2, messages: [{ role: 'system' as const, content: 'two' }], model: null, parameters: null, createdAt: 0 }],
  ]);
  const stage = createTemplateStage({
    store: { getVersion: async (_org, _id, pinned) => (asked.push(pinned), versions.get(pinned ?? 2)) },
    renderer: createTemplateRenderer(),
    models,
  });
  const run = async (request: Record<string, unknown>, settings: Record<string, unknown> = {}) => {
    let forwarded: GatewayCall | undefined;
    await stage.run(fakeCall({ request: { model: 'm', messages: [{ role: 'user', content: 'hi' }], ...request }, settings }), async (call) => {
      forwarded = call;
      return { kind: 'json', body: chatCompletion('ok') };
    });
    return ((forwarded!.request as { messages: Array<{ content: string }> }).messages)[0]!.content;
  };
  assert.equal(await run({ gw_prompt_template_id: 'tpl', gw_prompt_version: 1 }), 'one');
  assert.equal(await run({ gw_prompt_version: 1 }, { defaultPromptTemplateId: 'tpl' }), 'one', 'the default template, pinned');
  assert.equal(await run({}, { defaultPromptTemplateId: 'tpl' }), 'two', 'the default template, latest');
  await assert.rejects(run({ gw_prompt_version: 9 }, { defaultPromptTemplateId: 'tpl' }), (error: unknown) => error instanceof GatewayError && error.param === 'gw_prompt_version');
  await assert.rejects(run({ gw_prompt_version: 1 }), (error: unknown) => error instanceof GatewayError && error.param === 'gw_prompt_version' && /names none/.test(error.message));
  assert.deepEqual(asked, [1, 1, undefined, 9]);
});
