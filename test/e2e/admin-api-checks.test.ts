import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { GatewayEvent } from '../../src/lib/event-bus.js';
import { adminRequest, startGateway, type RunningGateway } from '../helpers/start-gateway.js';

/** Calls the gateway with any credential (or none). */
async function call(running: RunningGateway, method: string, path: string, options: { key?: string; body?: unknown; rawBody?: string } = {}) {
  const headers: Record<string, string> = {};
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  const payload = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  if (payload !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(running.url + path, { method, headers, body: payload });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

function assertInvalidRequest(response: { status: number; body: any }, param: string | undefined, label: string) {
  assert.equal(response.status, 400, `${label}: ${JSON.stringify(response.body)}`);
  assert.equal(response.body.error.type, 'invalid_request_error', label);
  assert.equal(response.body.error.code, 'invalid_request', label);
  assert.equal(typeof response.body.error.message, 'string', label);
  if (param !== undefined) assert.equal(response.body.error.param, param, label);
}

describe('admin API: scoping, validation order and key records', () => {
  let running: RunningGateway;
  let orgA: string;
  let orgB: string;
  let adminA: string;
  let adminB: string;
  let keyA: { id: string; key: string };
  let teamA: string;
  let teamB: string;

  before(async () => {
    running = await startGateway();
    const createOrg = async (name: string) => (await adminRequest(running, 'POST', '/api/admin/orgs', { name, tier: 'tier2' })).body.id as string;
    orgA = await createOrg('org a');
    orgB = await createOrg('org b');
    const topUp = await adminRequest(running, 'POST', `/api/admin/orgs/${orgA}/credits`, { amount_usd: '1.00', note: 'test' });
    assert.equal(topUp.status, 200, JSON.stringify(topUp.body));
    const createKey = async (orgId: string, body: Record<string, unknown>) => {
      const response = await adminRequest(running, 'POST', '/api/admin/keys', { org_id: orgId, ...body });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body as { id: string; key: string };
    };
    adminA = (await createKey(orgA, { name: 'admin a', role: 'org_admin' })).key;
    adminB = (await createKey(orgB, { name: 'admin b', role: 'org_admin' })).key;
    keyA = await createKey(orgA, { name: 'inference a' });
    teamA = (await adminRequest(running, 'POST', `/api/admin/orgs/${orgA}/teams`, { name: 'team a' })).body.id;
    teamB = (await adminRequest(running, 'POST', `/api/admin/orgs/${orgB}/teams`, { name: 'team b', allowed_models: ['none'] })).body.id;
  });
  after(async () => {
    await running?.close();
  });

  test("a key cannot be moved into another org's team, nor into an unknown one", async () => {
    for (const key of [running.masterKey, adminA]) {
      const moved = await call(running, 'PATCH', `/api/admin/keys/${keyA.id}`, { key, body: { team_id: teamB } });
      assertInvalidRequest(moved, 'team_id', 'team of another org');
      assert.equal(moved.body.error.message, `Unknown team '${teamB}' in this organization.`);
      const unknown = await call(running, 'PATCH', `/api/admin/keys/${keyA.id}`, { key, body: { team_id: '00000000-0000-0000-0000-000000000000' } });
      assertInvalidRequest(unknown, 'team_id', 'unknown team');
    }
    const record = await adminRequest(running, 'GET', `/api/admin/keys/${keyA.id}`);
    assert.equal(record.body.team_id, null, 'the key stayed where it was');
    const own = await call(running, 'PATCH', `/api/admin/keys/${keyA.id}`, { key: adminA, body: { team_id: teamA } });
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.equal(own.body.team_id, teamA);
  });

  test('revoking a revoked key answers the same, raises no second event and announces it again', async () => {
    const key = (await adminRequest(running, 'POST', '/api/admin/keys', { org_id: orgA, name: 'to revoke' })).body;
    const revokedEvents: GatewayEvent[] = [];
    const keyNotices: unknown[] = [];
    const stopEvents = running.gateway.services.events.subscribe((event) => {
      if (event.kind === 'key.revoked') revokedEvents.push(event);
    });
    const stopChanges = running.gateway.services.changes.subscribe((notice) => {
      if (notice.kind === 'key' && notice.id === key.id) keyNotices.push(notice);
    });
    try {
      const first = await adminRequest(running, 'POST', `/api/admin/keys/${key.id}/revoke`);
      const second = await adminRequest(running, 'POST', `/api/admin/keys/${key.id}/revoke`);
      const third = await adminRequest(running, 'DELETE', `/api/admin/keys/${key.id}`);
      for (const response of [first, second, third]) {
        assert.equal(response.status, 200);
        assert.equal(response.body.status, 'revoked');
        assert.equal(response.body.revoked_at, first.body.revoked_at);
      }
      assert.equal(revokedEvents.length, 1);
      // Each repeat re-announces: it is how an admin recovers from a revocation whose notice failed.
      assert.equal(keyNotices.length, 3);
    } finally {
      stopEvents();
      stopChanges();
    }
  });

  test('malformed ids, queries and model ids are 400 invalid_request, never 500', async () => {
    assertInvalidRequest(await call(running, 'GET', '/api/admin/keys?org_id=a&org_id=b', { key: running.masterKey }), 'org_id', 'repeated org_id');
    assertInvalidRequest(await call(running, 'DELETE', '/api/admin/keys/', { key: running.masterKey }), 'id', 'empty key id (delete)');
    assertInvalidRequest(await call(running, 'POST', '/api/admin/keys//revoke', { key: running.masterKey }), 'id', 'empty key id (revoke)');
    assertInvalidRequest(await call(running, 'GET', '/api/admin/deployments?model=a&model=b', { key: running.masterKey }), 'model', 'repeated model');
    assertInvalidRequest(
      await call(running, 'POST', `/api/admin/prompts/x/versions?org_id=a&org_id=b`, { key: running.masterKey, body: { messages: [{ role: 'user', content: 'hi' }] } }),
      'org_id',
      'repeated org_id on a prompt version',
    );
    assertInvalidRequest(
      await call(running, 'PATCH', `/api/admin/guardrails/x?org_id=a&org_id=b`, { key: running.masterKey, body: { name: 'g' } }),
      'org_id',
      'repeated org_id on a guardrail update',
    );
    for (const method of ['PATCH', 'DELETE']) {
      const response = await call(running, method, '/api/admin/models/%25zz', { key: running.masterKey, body: method === 'PATCH' ? { description: 'x' } : undefined });
      assert.equal(response.status, 404, `${method}: ${JSON.stringify(response.body)}`);
      assert.equal(response.body.error.message, "Unknown model '%zz'.");
    }
  });

  test('a model id with an encoded slash is found by its decoded id', async () => {
    const created = await adminRequest(running, 'POST', '/api/admin/models', { id: 'vendor/model-a', owned_by: 'test' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const patched = await adminRequest(running, 'PATCH', `/api/admin/models/${encodeURIComponent('vendor/model-a')}`, { description: 'slashed' });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const deleted = await adminRequest(running, 'DELETE', '/api/admin/models/vendor/model-a');
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    assert.equal(deleted.body.id, 'vendor/model-a');
  });

  test('admin writes check the credential before the body: 401 without one, 403 for an inference key', async () => {
    const writes: Array<[string, string, unknown]> = [
      ['POST', '/api/admin/prompts', {}],
      ['POST', '/api/admin/prompts/x/versions', {}],
      ['POST', '/api/admin/experiments', {}],
      ['POST', '/api/admin/guardrails', {}],
      ['PATCH', '/api/admin/experiments/x', { status: 1 }],
      ['PATCH', '/api/admin/guardrails/x', { stage: 1 }],
      ['PUT', '/api/admin/alert-routes', { org_id: 123 }],
      ['GET', '/api/admin/prompts?org_id=a&org_id=b', undefined],
      ['GET', '/api/admin/experiments?org_id=a&org_id=b', undefined],
    ];
    for (const [method, path, body] of writes) {
      const anonymous = await call(running, method, path, { body });
      assert.equal(anonymous.status, 401, `${method} ${path} without a credential: ${JSON.stringify(anonymous.body)}`);
      const wrong = await call(running, method, path, { body, key: 'sk-gw-not-a-real-key-000000000000000000000' });
      assert.equal(wrong.status, 401, `${method} ${path} with a bad credential`);
      const inference = await call(running, method, path, { body, key: keyA.key });
      assert.equal(inference.status, 403, `${method} ${path} with an inference key: ${JSON.stringify(inference.body)}`);
      const admin = await call(running, method, path, { body, key: adminA });
      assert.equal(admin.status, 400, `${method} ${path} with an admin key: ${JSON.stringify(admin.body)}`);
    }
  });

  test("another org's key or team is answered exactly like an unknown one", async () => {
    const unknownId = '00000000-0000-0000-0000-000000000000';
    for (const [method, path, body] of [
      ['GET', '/api/admin/keys/%s', undefined],
      ['PATCH', '/api/admin/keys/%s', { name: 'x' }],
      ['POST', '/api/admin/keys/%s/revoke', undefined],
      ['DELETE', '/api/admin/keys/%s', undefined],
    ] as const) {
      const foreign = await call(running, method, path.replace('%s', keyA.id), { key: adminB, body });
      const unknown = await call(running, method, path.replace('%s', unknownId), { key: adminB, body });
      assert.equal(foreign.status, 404, `${method} ${path}`);
      assert.equal(foreign.body.error.message, `Unknown key '${keyA.id}'.`);
      assert.deepEqual({ ...foreign.body.error, message: undefined }, { ...unknown.body.error, message: undefined });
      assert.ok(!JSON.stringify(foreign.body).includes(orgA), 'the org id does not leak');
    }
    const team = await call(running, 'PATCH', `/api/admin/teams/${teamA}`, { key: adminB, body: { name: 'x' } });
    assert.equal(team.status, 404);
    assert.equal(team.body.error.message, `Unknown team '${teamA}'.`);
    assert.ok(!JSON.stringify(team.body).includes(orgA), 'the org id does not leak');
    const stillActive = await adminRequest(running, 'GET', `/api/admin/keys/${keyA.id}`);
    assert.equal(stillActive.body.status, 'active');
  });

  test('an admin alert route for an unknown org is 404', async () => {
    const response = await call(running, 'PUT', '/api/admin/alert-routes', { key: running.masterKey, body: { org_id: 'nonexistent', channel_ids: [] } });
    assert.equal(response.status, 404, JSON.stringify(response.body));
    assert.equal(response.body.error.param, 'org_id');
    const listed = await call(running, 'GET', '/api/admin/alert-routes?org_id=nonexistent', { key: running.masterKey });
    assert.equal(listed.status, 404);
    const known = await call(running, 'PUT', '/api/admin/alert-routes', { key: running.masterKey, body: { org_id: orgA, channel_ids: [] } });
    assert.equal(known.status, 200, JSON.stringify(known.body));
    const wrongType = await call(running, 'PUT', '/api/admin/alert-routes', { key: running.masterKey, body: { org_id: 123, channel_ids: [] } });
    assertInvalidRequest(wrongType, 'org_id', 'org_id of the wrong type');
    assert.match(wrongType.body.error.message, /^Invalid value for 'org_id'/);
  });

  test('a PATCH of an org leaves out fields unchanged, and an org admin may change its settings', async () => {
    const renamed = await adminRequest(running, 'PATCH', `/api/admin/orgs/${orgA}`, { name: 'org a renamed' });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    assert.equal(renamed.body.tier, 'tier2');
    const settings = await call(running, 'PATCH', `/api/admin/orgs/${orgA}`, { key: adminA, body: { settings: { cache_default: false } } });
    assert.equal(settings.status, 200, JSON.stringify(settings.body));
    assert.equal(settings.body.tier, 'tier2');
    assert.equal(settings.body.name, 'org a renamed');
    assert.equal(settings.body.settings.cache_default, false);
    const tier = await call(running, 'PATCH', `/api/admin/orgs/${orgA}`, { key: adminA, body: { tier: 'tier3' } });
    assert.equal(tier.status, 403);
  });

  test('key records carry spend_usd, the same total as the per-key usage report', async () => {
    const response = await fetch(`${running.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keyA.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'Tell me a story about spend' }], max_tokens: 5 }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    const cost = response.headers.get('x-gw-request-cost')!;
    await response.text();
    const record = await adminRequest(running, 'GET', `/api/admin/keys/${keyA.id}`);
    assert.equal(record.body.spend_usd, cost);
    assert.notEqual(cost, '0.000000000', 'the call was priced');
    const usage = await adminRequest(running, 'GET', `/api/admin/usage/keys?org_id=${orgA}`);
    assert.equal(usage.body.data.find((row: { key_id: string }) => row.key_id === keyA.id).spend_usd, cost);
    const listed = await call(running, 'GET', '/api/admin/keys', { key: adminA });
    const byId = new Map(listed.body.data.map((key: { id: string; spend_usd: string }) => [key.id, key.spend_usd]));
    assert.equal(byId.get(keyA.id), cost);
    for (const spend of byId.values()) assert.match(spend as string, /^\d+\.\d{9}$/);
    const fresh = await adminRequest(running, 'POST', '/api/admin/keys', { org_id: orgA, name: 'fresh' });
    assert.equal(fresh.body.spend_usd, '0.000000000');
  });
});
