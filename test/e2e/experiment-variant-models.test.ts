import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminRequest, startGateway, type RunningGateway } from '../helpers/start-gateway.js';

describe('experiment targets and variants must name models the org can use', () => {
  let running: RunningGateway;
  before(async () => {
    running = await startGateway();
  });
  after(async () => running?.close());

  const create = (name: string, variants: unknown[], orgId = running.orgId) =>
    adminRequest(running, 'POST', '/api/admin/experiments', { org_id: orgId, name, target_kind: 'model', target: 'local-chat', variants });

  test('creating an experiment with an unknown variant model is a 400 naming variants[i].model', async () => {
    const response = await create('unknown model', [
      { name: 'a', weight: 1, model: 'nonexistent-model' },
      { name: 'b', weight: 1, model: 'local-chat' },
    ]);
    assert.equal(response.status, 400, JSON.stringify(response.body));
    assert.equal(response.body.error.code, 'invalid_request');
    assert.equal(response.body.error.param, 'variants[0].model');
    assert.match(response.body.error.message, /nonexistent-model/);
    const listed = await adminRequest(running, 'GET', `/api/admin/experiments?org_id=${running.orgId}`);
    assert.equal(listed.body.data.length, 0);
  });

  test('a model the org has not enabled, or one that cannot chat, is refused', async () => {
    const org = await adminRequest(running, 'POST', '/api/admin/orgs', { name: `limited ${Math.random()}`, tier: 'enterprise', enabled_models: ['local-chat'] });
    assert.equal(org.status, 200, JSON.stringify(org.body));
    const disabled = await create('disabled model', [{ name: 'a', weight: 1 }, { name: 'b', weight: 1, model: 'local-chat-mini' }], org.body.id);
    assert.equal(disabled.status, 400);
    assert.equal(disabled.body.error.param, 'variants[1].model');
    const embedding = await create('embedding model', [{ name: 'a', weight: 1 }, { name: 'b', weight: 1, model: 'local-embed' }]);
    assert.equal(embedding.status, 400);
    assert.equal(embedding.body.error.param, 'variants[1].model');
  });

  test('PATCH checks new variants the same way; valid ones are accepted', async () => {
    const created = await create('patchable', [
      { name: 'a', weight: 1, model: 'local-chat' },
      { name: 'b', weight: 1, model: 'local-chat-mini' },
    ]);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const patched = await adminRequest(running, 'PATCH', `/api/admin/experiments/${created.body.id}`, {
      org_id: running.orgId,
      variants: [
        { name: 'a', weight: 1, model: 'local-chat' },
        { name: 'c', weight: 1, model: 'nonexistent-model' },
      ],
    });
    assert.equal(patched.status, 400, JSON.stringify(patched.body));
    assert.equal(patched.body.error.param, 'variants[1].model');
    const stored = await adminRequest(running, 'GET', `/api/admin/experiments/${created.body.id}?org_id=${running.orgId}`);
    assert.deepEqual(stored.body.variants.map((variant: { model: string }) => variant.model), ['local-chat', 'local-chat-mini']);
  });

  test("a model experiment's target that is unknown, cannot chat or is not enabled is a 400 naming 'target'", async () => {
    const createTargeting = (name: string, target: string, orgId = running.orgId) =>
      adminRequest(running, 'POST', '/api/admin/experiments', { org_id: orgId, name, target_kind: 'model', target, variants: [{ name: 'a', weight: 1 }, { name: 'b', weight: 1 }] });
    const unknown = await createTargeting('unknown target', 'nonexistent-model');
    assert.equal(unknown.status, 400, JSON.stringify(unknown.body));
    assert.equal(unknown.body.error.code, 'invalid_request');
    assert.equal(unknown.body.error.type, 'invalid_request_error');
    assert.equal(unknown.body.error.param, 'target');
    assert.equal(unknown.body.error.message, "Invalid value for 'target': the model 'nonexistent-model' is not served by this gateway.");
    const embedding = await createTargeting('embedding target', 'local-embed');
    assert.equal(embedding.status, 400);
    assert.equal(embedding.body.error.param, 'target');
    assert.match(embedding.body.error.message, /does not support chat completions/);
    const org = await adminRequest(running, 'POST', '/api/admin/orgs', { name: `target check ${Math.random()}`, tier: 'enterprise', enabled_models: ['local-chat'] });
    assert.equal(org.status, 200, JSON.stringify(org.body));
    const disabled = await createTargeting('disabled target', 'local-chat-mini', org.body.id);
    assert.equal(disabled.status, 400);
    assert.equal(disabled.body.error.param, 'target');
    assert.match(disabled.body.error.message, /is not enabled for this organization/);
    const listed = await adminRequest(running, 'GET', `/api/admin/experiments?org_id=${org.body.id}`);
    assert.equal(listed.body.data.length, 0);
    const enabled = await createTargeting('enabled target', 'local-chat', org.body.id);
    assert.equal(enabled.status, 200, JSON.stringify(enabled.body));
  });

  test('PATCH does not re-check a target it cannot change', async () => {
    const org = await adminRequest(running, 'POST', '/api/admin/orgs', { name: `patch target ${Math.random()}`, tier: 'enterprise', enabled_models: ['local-chat', 'local-chat-mini'] });
    const created = await create('target disabled later', [{ name: 'a', weight: 1 }, { name: 'b', weight: 1 }], org.body.id);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal((await adminRequest(running, 'PATCH', `/api/admin/orgs/${org.body.id}`, { enabled_models: ['local-chat-mini'] })).status, 200);
    const patched = await adminRequest(running, 'PATCH', `/api/admin/experiments/${created.body.id}`, { org_id: org.body.id, status: 'paused', variants: [{ name: 'a', weight: 1 }, { name: 'c', weight: 2 }] });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.target, 'local-chat');
  });

  test("a call whose key may not use the variant's model runs as sent, outside the experiment", async () => {
    const org = await adminRequest(running, 'POST', '/api/admin/orgs', { name: `variant access ${Math.random()}`, tier: 'enterprise' });
    assert.equal(org.status, 200, JSON.stringify(org.body));
    assert.equal((await adminRequest(running, 'POST', `/api/admin/orgs/${org.body.id}/credits`, { amount_usd: '1.00', note: 'test' })).status, 200);
    const experiment = await create('all to mini', [{ name: 'a', weight: 1, model: 'local-chat-mini' }, { name: 'b', weight: 1, model: 'local-chat-mini' }], org.body.id);
    assert.equal(experiment.status, 200, JSON.stringify(experiment.body));
    const keyFor = async (name: string, allowedModels?: string[]) => {
      const created = await adminRequest(running, 'POST', '/api/admin/keys', { org_id: org.body.id, name, ...(allowedModels ? { allowed_models: allowedModels } : {}) });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      return created.body.key as string;
    };
    const chat = async (key: string) => {
      const response = await fetch(`${running.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'hi' }] }),
      });
      const body = await response.json();
      assert.equal(response.status, 200, JSON.stringify(body));
      return { model: body.model as string, abTest: response.headers.get('x-gw-ab-test') };
    };
    assert.deepEqual(await chat(await keyFor('restricted', ['local-chat'])), { model: 'local-chat', abTest: null });
    const open = await chat(await keyFor('open'));
    assert.equal(open.model, 'local-chat-mini');
    assert.match(open.abTest ?? '', /^all to mini:[ab]$/);
    const stats = await adminRequest(running, 'GET', `/api/admin/experiments/${experiment.body.id}/stats?org_id=${org.body.id}`);
    const calls = stats.body.variants.reduce((sum: number, variant: { calls: number }) => sum + variant.calls, 0);
    assert.equal(calls, 1, 'only the open key took part');
  });
});
