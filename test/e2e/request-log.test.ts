import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminRequest, startGateway, type RunningGateway } from '../helpers/start-gateway.js';

describe('request log', () => {
  let running: RunningGateway;
  before(async () => {
    running = await startGateway();
  });
  after(async () => running?.close());

  const chat = (content: string, user?: string) =>
    fetch(`${running.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${running.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-chat', gw_cache: false, user, messages: [{ role: 'user', content }] }),
    });
  const rowOf = async (requestId: string) => {
    await running.gateway.services.recorder.flush();
    return running.gateway.services.database.db.selectFrom('request_log').selectAll().where('request_id', '=', requestId).executeTakeFirstOrThrow();
  };

  test('one row per request by key alias, with user, tokens, cost and status; no contents by default', async () => {
    const response = await chat('secret project details', 'customer-42');
    const row = await rowOf(response.headers.get('x-gw-request-id')!);
    assert.match(row.key_alias ?? '', /^sk-\.\.\./);
    assert.ok(!JSON.stringify(row).includes(running.apiKey), 'the key itself is never logged');
    assert.equal(row.user, 'customer-42');
    assert.equal(row.status, 200);
    assert.ok(Number(row.prompt_tokens) > 0 && Number(row.completion_tokens) > 0);
    assert.ok(Number(row.cost_nanos) > 0);
    assert.ok(!JSON.stringify(row).includes('secret project details'));
  });

  test('an org that enables content logging gets messages and the answer recorded', async () => {
    const patched = await adminRequest(running, 'PATCH', `/api/admin/orgs/${running.orgId}`, { settings: { log_message_contents: true } });
    assert.equal(patched.status, 200);
    const response = await chat('please log this');
    const row = await rowOf(response.headers.get('x-gw-request-id')!);
    const details = JSON.parse(row.details ?? '{}');
    assert.deepEqual(details.messages, [{ role: 'user', content: 'please log this' }]);
    assert.match(details.response, /please log this/);
  });

  test('failed requests are recorded with their error code', async () => {
    const response = await fetch(`${running.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${running.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-chat', temperature: 9, messages: [{ role: 'user', content: 'x' }] }),
    });
    const row = await rowOf(response.headers.get('x-gw-request-id')!);
    assert.equal(row.status, 400);
    assert.equal(row.error_code, 'invalid_request');
  });
});
