import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminRequest, startGateway, type RunningGateway } from '../helpers/start-gateway.js';

describe('experiment variants must name models the org can use', () => {
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
});
