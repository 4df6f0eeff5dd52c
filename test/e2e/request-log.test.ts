import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminRequest, startGateway, type RunningGateway } from '../helpers/start-gateway.js';
import { timeOrderedIdFloor } from '../../src/lib/ids.js';

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

  test('with content logging, the log holds the messages as a redacting guardrail left them, and nothing of a blocked request', async () => {
    const patched = await adminRequest(running, 'PATCH', `/api/admin/orgs/${running.orgId}`, { settings: { log_message_contents: true } });
    assert.equal(patched.status, 200);
    const guardrail = async (name: string, action: string) => {
      const created = await adminRequest(running, 'POST', '/api/admin/guardrails', { org_id: running.orgId, name, kind: 'pii', action, enabled_by_default: false });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      return created.body.id as string;
    };
    const guardedChat = (content: string, guardrailId: string) =>
      fetch(`${running.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${running.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local-chat', gw_cache: false, gw_guardrail_ids: [guardrailId], messages: [{ role: 'user', content }] }),
      });

    const redacted = await guardedChat('mail me at jane@example.com', await guardrail('log-pii-redact', 'redact'));
    assert.equal(redacted.status, 200);
    const redactedRow = await rowOf(redacted.headers.get('x-gw-request-id')!);
    assert.ok(!JSON.stringify(redactedRow).includes('jane@example.com'), 'the address the guardrail redacted is not logged');
    assert.deepEqual(JSON.parse(redactedRow.details ?? '{}').messages, [{ role: 'user', content: 'mail me at [REDACTED_EMAIL]' }]);

    const blocked = await guardedChat('mail me at john@example.com', await guardrail('log-pii-block', 'block'));
    assert.equal(blocked.status, 400);
    const blockedRow = await rowOf(blocked.headers.get('x-gw-request-id')!);
    assert.equal(blockedRow.error_code, 'guardrail_blocked');
    assert.ok(!JSON.stringify(blockedRow).includes('john@example.com'), 'a blocked request leaves no contents in the log');
    const details = JSON.parse(blockedRow.details ?? '{}');
    assert.equal(details.messages, undefined);
    assert.equal(details.contents_withheld, 'guardrail_blocked');
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

describe('request log retention, as the gateway wires it', () => {
  let running: RunningGateway;
  before(async () => {
    running = await startGateway({ config: { requestLogRetentionDays: 30 } });
  });
  after(async () => running?.close());

  test('a round deletes request- and guardrail-log rows older than GW_REQUEST_LOG_RETENTION_DAYS and keeps the calls just made', async () => {
    const { db } = running.gateway.services.database;
    const response = await fetch(`${running.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${running.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'kept' }] }),
    });
    assert.equal(response.status, 200);
    const requestId = response.headers.get('x-gw-request-id')!;
    await running.gateway.services.recorder.flush();
    const old = Date.now() - 31 * 86_400_000;
    const recent = await db.selectFrom('request_log').selectAll().where('request_id', '=', requestId).executeTakeFirstOrThrow();
    // Rows as calls 31 days ago left them: time-ordered ids of that moment.
    const idFrom = (ms: number, serial: number) => `${timeOrderedIdFloor(ms)}7000-8000-${String(serial).padStart(12, '0')}`;
    await db
      .insertInto('request_log')
      .values({ ...recent, id: idFrom(old, 1), request_id: 'req-from-last-month', created_at: old })
      .execute();
    await db
      .insertInto('guardrail_logs')
      .values({
        id: idFrom(old, 2),
        org_id: running.orgId,
        guardrail_id: 'g',
        guardrail_name: 'pii',
        kind: 'pii',
        stage: 'pre',
        action: 'redacted',
        request_id: 'req-from-last-month',
        key_id: null,
        key_alias: null,
        model: null,
        finding_types: '[]',
        reason: null,
        created_at: old,
      })
      .execute();
    assert.equal(await running.gateway.services.logRetention.pruneOnce(), 2);
    const left = await db.selectFrom('request_log').select('request_id').execute();
    assert.ok(left.some((row) => row.request_id === requestId), 'the call just made stays');
    assert.ok(!left.some((row) => row.request_id === 'req-from-last-month'));
    assert.equal((await db.selectFrom('guardrail_logs').select('id').execute()).length, 0);
  });
});
