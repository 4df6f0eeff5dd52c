import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { TEST_DATABASES } from '../helpers/test-databases.js';
import { type AlertsTestApp, startAlertsTestApp } from './alerts-fixtures/alerts-test-app.js';
import { type HttpsReceiver, startHttpsReceiver } from './alerts-fixtures/https-receiver.js';
import { type SmtpInbox, startSmtpInbox } from './alerts-fixtures/smtp-inbox.js';
import { createTestCertificates, type TestCertificates } from './alerts-fixtures/test-certificates.js';

describe('email, Slack, Teams and Jira channels', () => {
  let certificates: TestCertificates;
  let receiver: HttpsReceiver;
  let inbox: SmtpInbox;
  let harness: AlertsTestApp;

  before(async () => {
    certificates = createTestCertificates();
    // Each fake answers as the real service does: Slack 200 "ok", Teams workflows 202, Jira 201 with the issue key.
    receiver = await startHttpsReceiver(certificates, (request) => {
      if (request.path.startsWith('/slack')) return { status: 200, body: 'ok' };
      if (request.path.startsWith('/teams')) return { status: 202, body: '' };
      if (request.path === '/jira/rest/api/3/issue') return { status: 201, body: '{"id":"10001","key":"OPS-1"}', headers: { 'content-type': 'application/json' } };
      return { status: 404 };
    });
    inbox = await startSmtpInbox();
    harness = await startAlertsTestApp({
      databaseUrl: await TEST_DATABASES[0].create(),
      allowedHosts: [`127.0.0.1:${receiver.port}`],
      caFile: certificates.caFile,
      smtpUrl: inbox.url,
    });
  });
  after(async () => {
    await harness.close();
    await receiver.close();
    await inbox.close();
    certificates.remove();
  });

  async function createAndTest(body: Record<string, unknown>) {
    const created = await harness.call('POST', '/gw/channels', { is_active: true, ...body });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const result = await harness.call('POST', `/gw/channels/${created.body.id}/test`);
    assert.equal(result.status, 200);
    return { id: created.body.id as string, result: result.body };
  }

  test('email: the test notification reaches a local SMTP inbox', async () => {
    const { result } = await createAndTest({ name: 'mail', channel_type: 'email', config: { to: ['oncall@example.com', 'lead@example.com'] } });
    assert.equal(result.delivered, true, result.error);
    const [mail] = await inbox.waitFor(1);
    assert.deepEqual(mail.to.sort(), ['lead@example.com', 'oncall@example.com']);
    assert.equal(mail.from, 'alerts@gw.test');
    assert.match(mail.raw, /Subject: \[gw\] Test notification/);
    assert.match(mail.raw, /Severity: INFO/);
    assert.match(mail.raw, /test: true/);
  });

  test('email without SMTP configured fails with a clear reason', async () => {
    const other = await startAlertsTestApp({ databaseUrl: await TEST_DATABASES[0].create() });
    try {
      const created = await other.call('POST', '/gw/channels', { name: 'mail', channel_type: 'email', config: { to: 'a@example.com' } });
      const result = await other.call('POST', `/gw/channels/${created.body.id}/test`);
      assert.equal(result.body.delivered, false);
      assert.match(result.body.error, /not configured/);
    } finally {
      await other.close();
    }
  });

  test('slack: an incoming-webhook message with text and blocks (title, severity, details)', async () => {
    const { result } = await createAndTest({ name: 'slack', channel_type: 'slack', config: { webhook_url: receiver.url('/slack/services/T000/B000/XXXX') } });
    assert.deepEqual({ delivered: result.delivered, status: result.status }, { delivered: true, status: 200 });
    const request = (await receiver.waitFor(1, '/slack/services/T000/B000/XXXX'))[0];
    assert.equal(request.headers['content-type'], 'application/json');
    const message = JSON.parse(request.raw.toString());
    assert.match(message.text, /^\[gw\] Test notification/);
    assert.equal(message.blocks[0].type, 'header');
    assert.equal(message.blocks[0].text.type, 'plain_text');
    assert.match(message.blocks[0].text.text, /^\[gw\] /);
    assert.match(message.blocks[1].text.text, /\*Severity:\* INFO/);
    const fields = message.blocks[2].fields.map((field: { text: string }) => field.text);
    assert.ok(fields.includes('*test*\ntrue'));
    assert.equal(message.blocks.at(-1).type, 'context');
  });

  test('teams: a message carrying an Adaptive Card', async () => {
    const { result } = await createAndTest({ name: 'teams', channel_type: 'teams', config: { webhook_url: receiver.url('/teams/webhookb2/abc') } });
    assert.deepEqual({ delivered: result.delivered, status: result.status }, { delivered: true, status: 202 });
    const card = JSON.parse((await receiver.waitFor(1, '/teams/webhookb2/abc'))[0].raw.toString());
    assert.equal(card.type, 'message');
    assert.equal(card.attachments[0].contentType, 'application/vnd.microsoft.card.adaptive');
    const content = card.attachments[0].content;
    assert.equal(content.type, 'AdaptiveCard');
    assert.match(content.body[0].text, /^\[gw\] Test notification/);
    const facts = Object.fromEntries(content.body[2].facts.map((fact: { title: string; value: string }) => [fact.title, fact.value]));
    assert.equal(facts.Severity, 'INFO');
    assert.equal(facts.test, 'true');
  });

  test('jira: POST /rest/api/3/issue with basic auth and an ADF description', async () => {
    const { result } = await createAndTest({
      name: 'jira',
      channel_type: 'jira',
      config: { site_url: receiver.url('/jira'), project_key: 'OPS', issue_type: 'Bug', email: 'bot@acme.com', api_token: 'jira-api-token-123' },
    });
    assert.deepEqual({ delivered: result.delivered, status: result.status }, { delivered: true, status: 201 });
    const request = (await receiver.waitFor(1, '/jira/rest/api/3/issue'))[0];
    assert.equal(request.headers.authorization, `Basic ${Buffer.from('bot@acme.com:jira-api-token-123').toString('base64')}`);
    const { fields } = JSON.parse(request.raw.toString());
    assert.deepEqual(fields.project, { key: 'OPS' });
    assert.deepEqual(fields.issuetype, { name: 'Bug' });
    assert.match(fields.summary, /^\[gw\] Test notification/);
    assert.equal(fields.description.type, 'doc');
    assert.equal(fields.description.version, 1);
    assert.equal(fields.description.content[0].type, 'paragraph');
    assert.ok(JSON.stringify(fields.description).includes('Severity: INFO'));
    assert.deepEqual(fields.labels, ['gw', 'severity-info']);
  });
});
