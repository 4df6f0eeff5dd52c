import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminRequest, startGateway, type RunningGateway } from '../helpers/start-gateway.js';

/** Calls the gateway with a credential and an optional JSON body. */
async function call(running: RunningGateway, method: string, path: string, key: string, body?: unknown) {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(running.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

function assertInvalidRequest(response: { status: number; body: any }, param: string, label: string) {
  assert.equal(response.status, 400, `${label}: ${JSON.stringify(response.body)}`);
  assert.equal(response.body.error.type, 'invalid_request_error', label);
  assert.equal(response.body.error.code, 'invalid_request', label);
  assert.equal(typeof response.body.error.message, 'string', label);
  assert.equal(response.body.error.param, param, label);
}

describe('credit, pricing and video routes: malformed path ids and queries', () => {
  let running: RunningGateway;

  before(async () => {
    running = await startGateway();
  });
  after(async () => {
    await running?.close();
  });

  test('a credit top-up for an empty org id is 400 naming orgId', async () => {
    const response = await call(running, 'POST', '/api/admin/orgs//credits', running.masterKey, { amount_usd: '1.00' });
    assertInvalidRequest(response, 'orgId', 'empty org id');
  });

  test('a repeated or malformed credit history query is 400 naming the parameter', async () => {
    for (const [query, param] of [
      ['limit=1&limit=2', 'limit'],
      ['offset=1&offset=2', 'offset'],
      ['limit=1.5', 'limit'],
    ] as const) {
      assertInvalidRequest(await call(running, 'GET', `/api/credits/history?${query}`, running.apiKey), param, query);
    }
  });

  test('price overrides with an empty model or org id are 400 naming it', async () => {
    const price = { inputPerMillion: '0.1', outputPerMillion: '0.2' };
    for (const [method, path, param, body] of [
      ['PUT', '/api/admin/pricing/', 'modelId', price],
      ['DELETE', '/api/admin/pricing/', 'modelId', undefined],
      ['PUT', '/api/admin/orgs//pricing/some-model', 'orgId', price],
      ['DELETE', '/api/admin/orgs//pricing/some-model', 'orgId', undefined],
      ['PUT', `/api/admin/orgs/${running.orgId}/pricing/`, 'modelId', price],
      ['DELETE', `/api/admin/orgs/${running.orgId}/pricing/`, 'modelId', undefined],
    ] as const) {
      assertInvalidRequest(await call(running, method, path, running.masterKey, body), param, `${method} ${path}`);
    }
  });

  test('a price override for a model id with an escaped character is stored under the decoded id', async () => {
    const price = { inputPerMillion: '0.1', outputPerMillion: '0.2' };
    const set = await call(running, 'PUT', '/api/admin/pricing/odd%25model', running.masterKey, price);
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal(set.body.model, 'odd%model');
    const removed = await call(running, 'DELETE', '/api/admin/pricing/odd%25model', running.masterKey);
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
    assert.equal(removed.body.deleted, true);
  });

  test('a video with an empty id is 400 naming id; an unknown one is 404', async () => {
    assertInvalidRequest(await call(running, 'GET', '/v1/videos//content', running.apiKey), 'id', 'empty video id (content)');
    const unknown = await call(running, 'GET', '/v1/videos/video_unknown', running.apiKey);
    assert.equal(unknown.status, 404, JSON.stringify(unknown.body));
    const long = await call(running, 'GET', `/v1/videos/${'v'.repeat(300)}`, running.apiKey);
    assert.equal(long.status, 404, JSON.stringify(long.body));
  });
});

describe('catalog PATCH: fields left out keep their values', () => {
  let running: RunningGateway;

  before(async () => {
    running = await startGateway();
  });
  after(async () => {
    await running?.close();
  });

  test('a PATCH of one model field leaves owned_by, strategy and fallbacks as they were', async () => {
    const created = await adminRequest(running, 'POST', '/api/admin/models', {
      id: 'patch-model',
      owned_by: 'example',
      strategy: 'weighted',
      fallbacks: [{ model: 'local-chat', on: ['rate_limited'] }],
      description: 'first',
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const patched = await adminRequest(running, 'PATCH', '/api/admin/models/patch-model', { description: 'second' });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.description, 'second');
    assert.equal(patched.body.owned_by, 'example');
    assert.equal(patched.body.strategy, 'weighted');
    assert.deepEqual(patched.body.fallbacks, [{ model: 'local-chat', on: ['rate_limited'] }]);
    const empty = await adminRequest(running, 'PATCH', '/api/admin/models/patch-model', {});
    assert.equal(empty.status, 200, `an empty PATCH: ${JSON.stringify(empty.body)}`);
    assert.deepEqual({ ...empty.body, deployments: undefined }, { ...patched.body, deployments: undefined });
    const unknown = await adminRequest(running, 'PATCH', '/api/admin/models/no-such-model', {});
    assert.equal(unknown.status, 404, JSON.stringify(unknown.body));
  });

  test('a PATCH of one deployment field leaves the others as they were', async () => {
    const created = await adminRequest(running, 'POST', '/api/admin/deployments', {
      model: 'patch-model',
      provider: 'openai-compatible',
      upstream_model: 'upstream-x',
      base_url: 'http://127.0.0.1:9/v1',
      weight: 7,
      priority: 3,
      timeouts: { connect_ms: 1000, total_ms: 9000 },
      rpm: 60,
      tpm: 6000,
      pricing: { inputPerMillion: '0.1', outputPerMillion: '0.2' },
      settings: { region: 'eu' },
      enabled: false,
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const patched = await adminRequest(running, 'PATCH', `/api/admin/deployments/${created.body.id}`, { upstream_model: 'upstream-y' });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.deepEqual(patched.body, { ...created.body, upstream_model: 'upstream-y' });
  });

  test('a PATCH of a credential name keeps its provider and its secret', async () => {
    const created = await adminRequest(running, 'POST', '/api/admin/credentials', { name: 'first', provider: 'openai-compatible', api_key: 'sk-upstream-secret' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const deployment = await adminRequest(running, 'POST', '/api/admin/deployments', {
      model: 'patch-model',
      provider: 'openai-compatible',
      upstream_model: 'upstream-z',
      base_url: 'http://127.0.0.1:9/v1',
      credential_id: created.body.id,
    });
    assert.equal(deployment.body.has_api_key, true, JSON.stringify(deployment.body));
    const patched = await adminRequest(running, 'PATCH', `/api/admin/credentials/${created.body.id}`, { name: 'second' });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.deepEqual(patched.body, { ...created.body, name: 'second' });
    const listed = await adminRequest(running, 'GET', '/api/admin/deployments?model=patch-model');
    const current = listed.body.data.find((entry: { id: string }) => entry.id === deployment.body.id);
    assert.equal(current.has_api_key, true, 'the key is still there');
  });
});
