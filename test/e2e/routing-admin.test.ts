import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { adminRequest, startGateway, type RunningGateway } from '../helpers/start-gateway.js';
import { startFlakyUpstream, type FlakyUpstream } from '../fakes/flaky-upstream.js';

describe('routing admin API: credentials, models, deployments, health', () => {
  let running: RunningGateway;
  let upstream: FlakyUpstream;
  let client: OpenAI;

  before(async () => {
    upstream = await startFlakyUpstream('admin-made');
    running = await startGateway({ config: { bootstrapTier: 'enterprise' } });
    client = new OpenAI({ apiKey: running.apiKey, baseURL: running.baseURL, maxRetries: 0 });
  });
  after(async () => {
    await running?.close();
    await upstream?.close();
  });

  test('a model made through the API serves calls with the sealed credential', async () => {
    const credential = await adminRequest(running, 'POST', '/api/admin/credentials', {
      name: 'fake-upstream',
      provider: 'openai-compatible',
      api_key: 'sk-sealed-secret',
    });
    assert.equal(credential.status, 200);
    assert.ok(!JSON.stringify(credential.body).includes('sk-sealed-secret'));
    const secretAtRest = await running.gateway.services.database.db
      .selectFrom('provider_credentials')
      .select('secret_ciphertext')
      .where('id', '=', credential.body.id)
      .executeTakeFirstOrThrow();
    assert.ok(!secretAtRest.secret_ciphertext.includes('sk-sealed-secret'));

    const model = await adminRequest(running, 'POST', '/api/admin/models', {
      id: 'admin-model',
      owned_by: 'example',
      strategy: 'weighted',
      fallbacks: [{ model: 'local-chat', on: ['any'] }],
    });
    assert.equal(model.status, 200);
    assert.equal((await adminRequest(running, 'POST', '/api/admin/models', { id: 'admin-model' })).status, 409);

    const created = await adminRequest(running, 'POST', '/api/admin/deployments', {
      model: 'admin-model',
      provider: 'openai-compatible',
      upstream_model: 'upstream-x',
      credential_id: credential.body.id,
      base_url: upstream.baseUrl,
      timeouts: { first_byte_ms: 2000 },
      pricing: { inputPerMillion: '0.1', outputPerMillion: '0.2' },
    });
    assert.equal(created.status, 200);
    assert.equal(created.body.has_api_key, true);
    assert.equal(created.body.timeouts.first_byte_ms, 2000);
    assert.equal((await adminRequest(running, 'POST', '/api/admin/deployments', { model: 'admin-model', provider: 'nope', upstream_model: 'x' })).status, 400);

    // Deployment prices alone do not satisfy the meter's pre-call check yet; a model price does.
    assert.equal((await adminRequest(running, 'PUT', '/api/admin/pricing/admin-model', { inputPerMillion: '0.1', outputPerMillion: '0.2' })).status, 200);
    const { data, response } = await client.chat.completions
      .create({ model: 'admin-model', messages: [{ role: 'user', content: 'admin route call' }] })
      .withResponse();
    assert.equal(data.choices[0]!.message.content, 'from admin-made');
    assert.equal(response.headers.get('x-gw-route'), `${created.body.id};attempts=1`);

    // The upstream failing for good: the `any` fallback to the built-in local model answers.
    upstream.setDefault({ kind: 'status', status: 500 });
    const fallback = await client.chat.completions
      .create({ model: 'admin-model', messages: [{ role: 'user', content: 'fallback please' }] })
      .withResponse();
    assert.match(fallback.response.headers.get('x-gw-route') ?? '', /;fallback=local-chat$/);
    upstream.setDefault({ kind: 'ok' });

    const listed = await adminRequest(running, 'GET', '/api/admin/models');
    const entry = listed.body.data.find((item: { id: string }) => item.id === 'admin-model');
    assert.equal(entry.source, 'database');
    assert.equal(entry.deployments.length, 1);
    assert.equal(listed.body.data.find((item: { id: string }) => item.id === 'local-chat').source, 'builtin');

    const health = await adminRequest(running, 'GET', '/api/admin/deployments/health');
    const row = health.body.data.find((item: { deployment_id: string }) => item.deployment_id === created.body.id);
    assert.equal(row.circuit, 'closed');
    assert.ok(row.samples >= 2);
    assert.ok(row.error_rate > 0);

    assert.equal((await adminRequest(running, 'DELETE', `/api/admin/credentials/${credential.body.id}`)).status, 409);
    const disabled = await adminRequest(running, 'PATCH', `/api/admin/deployments/${created.body.id}`, { enabled: false });
    assert.equal(disabled.body.enabled, false);
    assert.equal((await adminRequest(running, 'DELETE', '/api/admin/models/admin-model')).status, 200);
    assert.equal((await adminRequest(running, 'DELETE', `/api/admin/credentials/${credential.body.id}`)).status, 200);
    await assert.rejects(
      client.chat.completions.create({ model: 'admin-model', messages: [{ role: 'user', content: 'gone' }] }),
      (error: InstanceType<typeof OpenAI.APIError>) => error.status === 404 || error.status === 400,
    );
    assert.equal((await adminRequest(running, 'DELETE', '/api/admin/models/local-chat')).status, 409);
  });

  test('inference keys cannot use the routing admin API', async () => {
    const response = await fetch(`${running.url}/api/admin/credentials`, { headers: { authorization: `Bearer ${running.apiKey}` } });
    assert.ok(response.status === 401 || response.status === 403, String(response.status));
  });
});
