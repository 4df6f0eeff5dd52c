import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { after, before, describe, test } from 'node:test';
import { startFakeUpstream, type FakeUpstream } from '../fakes/fake-upstream.js';
import { adminRequest, startGateway, type RunningGateway } from '../helpers/start-gateway.js';
import { tempDirectory } from '../helpers/test-databases.js';

/**
 * A misbehaving OpenAI-compatible upstream: it answers with whatever usage the request's last
 * message names as JSON, e.g. `{"prompt_tokens":1e15,"completion_tokens":1e15}`.
 */
describe('money stays reportable whatever usage an upstream reports', () => {
  let upstream: FakeUpstream;
  let running: RunningGateway;

  before(async () => {
    upstream = await startFakeUpstream((request) => {
      const body = request.json as { messages: Array<{ content: string }> };
      const usage = JSON.parse(body.messages.at(-1)!.content) as Record<string, unknown>;
      return {
        body: {
          id: 'chatcmpl-bounds',
          object: 'chat.completion',
          created: 1,
          model: 'upstream-model',
          choices: [{ index: 0, message: { role: 'assistant', content: 'a short answer' }, finish_reason: 'stop' }],
          usage,
        },
      };
    });
    const configFile = join(tempDirectory(), 'gw.yaml');
    writeFileSync(
      configFile,
      [
        'models:',
        '  - id: bounded-chat',
        '    owned_by: test',
        '    deployments:',
        '      - provider: openai-compatible',
        '        upstream_model: upstream-model',
        `        base_url: ${upstream.baseUrl}`,
        '        api_key_env: FAKE_UPSTREAM_KEY',
        '        pricing: { inputPerMillion: "0.15", outputPerMillion: "0.60" }',
      ].join('\n'),
    );
    running = await startGateway({ config: { configFile }, environment: { FAKE_UPSTREAM_KEY: 'upstream-secret-key' } });
  });
  after(async () => {
    await running?.close();
    await upstream?.close();
  });

  async function tenant(credit: string | null = '1.00', limits: Record<string, number> = {}) {
    const org = await adminRequest(running, 'POST', '/api/admin/orgs', { name: `bounds ${Math.random()}`, tier: 'enterprise', limits });
    assert.equal(org.status, 200, JSON.stringify(org.body));
    if (credit !== null) {
      const topUp = await adminRequest(running, 'POST', `/api/admin/orgs/${org.body.id}/credits`, { amount_usd: credit });
      assert.equal(topUp.status, 200, JSON.stringify(topUp.body));
    }
    const key = await adminRequest(running, 'POST', '/api/admin/keys', { org_id: org.body.id, name: 'bounds key', limits });
    assert.equal(key.status, 200, JSON.stringify(key.body));
    return { orgId: org.body.id as string, key: key.body.key as string };
  }

  async function chat(key: string, usage: unknown, extra: Record<string, unknown> = {}) {
    const response = await fetch(`${running.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'bounded-chat', messages: [{ role: 'user', content: JSON.stringify(usage) }], max_tokens: 20, ...extra }),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as any };
  }

  async function get(key: string, path: string) {
    const response = await fetch(running.url + path, { headers: { authorization: `Bearer ${key}` } });
    return { status: response.status, body: (await response.json()) as any };
  }

  test('usage of 1e15 tokens: the client gets its answer, the call is charged from an estimate, every money endpoint keeps answering', async () => {
    const { key } = await tenant();
    const answered = await chat(key, { prompt_tokens: 1e15, completion_tokens: 1e15, total_tokens: 2e15 });
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    assert.equal(answered.body.choices[0].message.content, 'a short answer');
    const cost = answered.headers.get('x-gw-request-cost')!;
    assert.match(cost, /^0\.0000\d{5}$/, cost);
    const history = await get(key, '/api/credits/history');
    assert.equal(history.status, 200);
    assert.equal(history.body.data[0].cost_usd, cost);
    assert.equal(history.body.data[0].units.estimated, true);
    assert.ok(history.body.data[0].units.inputTokens < 1000);
    const balance = await get(key, '/api/credits/balance');
    assert.equal(balance.status, 200);
    assert.equal(balance.body.spent_usd, cost);
    const summary = await adminRequest(running, 'GET', '/api/admin/usage/summary');
    assert.equal(summary.status, 200, JSON.stringify(summary.body));
  });

  test('a fractional prompt_tokens is billed rounded up, not a 500 with a hold left behind', async () => {
    const { key } = await tenant();
    const answered = await chat(key, { prompt_tokens: 10.5, completion_tokens: 2, total_tokens: 12.5 });
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    // 11 input tokens at 0.15 USD/M + 2 output tokens at 0.60 USD/M.
    assert.equal(answered.headers.get('x-gw-request-cost'), '0.000002850');
    const balance = await get(key, '/api/credits/balance');
    assert.equal(balance.body.spent_usd, '0.000002850');
    assert.equal(balance.body.reserved_usd, '0.000000000');
    const history = await get(key, '/api/credits/history');
    assert.deepEqual([history.body.data[0].units.inputTokens, history.body.data[0].units.estimated], [11, undefined]);
  });

  test('max_tokens far beyond anything billable is a 400 naming it (on a key whose TPM limit lets it through)', async () => {
    const { key } = await tenant('1.00', { tpm: 1e15 });
    const refused = await chat(key, { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, { max_tokens: 100_000_000_000_000 });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'invalid_request');
    assert.equal(refused.body.error.param, 'max_tokens');
  });

  test('top-ups beyond the maximum are refused before anything is written', async () => {
    const { orgId, key } = await tenant();
    for (let attempt = 0; attempt < 2; attempt++) {
      const refused = await adminRequest(running, 'POST', `/api/admin/orgs/${orgId}/credits`, { amount_usd: '9000000' });
      assert.equal(refused.status, 400, JSON.stringify(refused.body));
      assert.equal(refused.body.error.param, 'amount_usd');
    }
    const balance = await get(key, '/api/credits/balance');
    assert.equal(balance.status, 200);
    assert.equal(balance.body.credited_usd, '1.000000000');
    const rows = await running.gateway.services.database.db.selectFrom('credit_transactions').select('id').where('org_id', '=', orgId).execute();
    assert.equal(rows.length, 1);
  });

  test('a spend row already past the exact range still reads: balance, history and usage summary answer 200', async () => {
    // No top-up yet: the org's counters are first read after the row is in.
    const { orgId, key } = await tenant(null);
    await sql`insert into spend_ledger (id, request_id, org_id, key_id, key_alias, team_id, "user", model, operation, units, cost_nanos, unpriced, created_at)
      values ('bad-row-1', 'bad-request-1', ${orgId}, 'key-x', 'sk-...bad', null, null, 'bounded-chat', 'chat', '{}', 3000000000000000000, 0, ${Date.now()})`.execute(
      running.gateway.services.database.db,
    );
    await running.gateway.services.database.db
      .insertInto('request_log')
      .values({
        id: 'bad-log-1', request_id: 'bad-request-1', org_id: orgId, key_id: 'key-x', key_alias: 'sk-...bad', team_id: null, user: null, model: 'bounded-chat',
        operation: 'chat', status: 200, error_code: null, latency_ms: 1, prompt_tokens: 1e15, completion_tokens: 1e15, cost_nanos: 3e18,
        deployment_id: null, attempts: 1, cache: null, stream: 0, details: null, created_at: Date.now(),
      })
      .execute();
    const history = await get(key, '/api/credits/history');
    assert.equal(history.status, 200, JSON.stringify(history.body));
    assert.equal(history.body.data[0].cost_usd, '3000000000.000000000');
    const balance = await get(key, '/api/credits/balance');
    assert.equal(balance.status, 200, JSON.stringify(balance.body));
    assert.equal(balance.body.spent_usd, '3000000000.000000000');
    const summary = await adminRequest(running, 'GET', '/api/admin/usage/summary');
    assert.equal(summary.status, 200, JSON.stringify(summary.body));
    assert.match(summary.body.spend_usd, /^300000000\d\.\d{9}$/);
    const refused = await chat(key, { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 });
    assert.equal(refused.status, 402, 'a balance far below zero refuses calls');
  });
});
