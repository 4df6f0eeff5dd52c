import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Alerting } from '../../src/alerts/create-alerting.js';
import { adminRequest, type RunningGateway, startGateway } from '../helpers/start-gateway.js';
import { type HttpsReceiver, startHttpsReceiver } from './alerts-fixtures/https-receiver.js';
import { type SmtpInbox, startSmtpInbox } from './alerts-fixtures/smtp-inbox.js';
import { createTestCertificates, type TestCertificates } from './alerts-fixtures/test-certificates.js';

/** Waits for a condition the gateway reaches asynchronously; fails with `what` instead of hanging. */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>, attempts = 200): Promise<T> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('a budget crossing reaches a webhook, an email inbox and a Slack endpoint (full gateway)', () => {
  let certificates: TestCertificates;
  let receiver: HttpsReceiver;
  let inbox: SmtpInbox;
  let running: RunningGateway;

  before(async () => {
    certificates = createTestCertificates();
    receiver = await startHttpsReceiver(certificates, () => ({ status: 200, body: 'ok' }));
    inbox = await startSmtpInbox();
    running = await startGateway({
      config: { webhookAllowedHosts: [`127.0.0.1:${receiver.port}`], webhookCaFile: certificates.caFile, smtpUrl: inbox.url, smtpFrom: 'gw <alerts@gw.test>' },
    });
  });
  after(async () => {
    await running?.close();
    await receiver.close();
    await inbox.close();
    certificates.remove();
  });

  test('two calls that spend past 50%, 80% and 100% send three notifications with rising severity to each channel', async (t) => {
    const alerting = (running.gateway.services as unknown as { alerting?: Alerting }).alerting;
    if (!alerting) {
      t.skip('alerting is not wired into the gateway (src/app.ts) yet');
      return;
    }
    const chat = (apiKey: string) =>
      fetch(`${running.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local-chat', max_tokens: 1, gw_cache: false, messages: [{ role: 'user', content: 'spend something' }] }),
      });
    // The price of one call, read off a call with the bootstrap key, so the budget below is exactly two calls.
    const probe = await chat(running.apiKey);
    assert.equal(probe.status, 200, await probe.clone().text());
    const costNanos = Math.round(Number(probe.headers.get('x-gw-request-cost')) * 1e9);
    assert.ok(costNanos > 0, 'local-chat calls are priced');
    const key = await adminRequest(running, 'POST', '/api/admin/keys', {
      org_id: running.orgId,
      name: 'budget-alerts',
      budget: { limit_usd: ((2 * costNanos) / 1e9).toFixed(9), period: 'monthly', thresholds: [0.5, 0.8, 1] },
    });
    assert.equal(key.status, 200, JSON.stringify(key.body));
    const apiKey: string = key.body.key;

    const create = async (body: Record<string, unknown>) => {
      const response = await fetch(`${running.url}/gw/channels`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ is_active: true, ...body }),
      });
      assert.equal(response.status, 200, await response.clone().text());
      return ((await response.json()) as { id: string }).id;
    };
    await create({ name: 'webhook', channel_type: 'webhook', config: { url: receiver.url('/budget-hook'), secret: 'budget-secret' } });
    await create({ name: 'email', channel_type: 'email', config: { to: ['finance@example.com'] } });
    await create({ name: 'slack', channel_type: 'slack', config: { webhook_url: receiver.url('/slack/services/T/B/X') } });

    // The first call reaches 50%; the second reaches 80% and 100%.
    for (let call = 0; call < 2; call++) {
      const completion = await chat(apiKey);
      assert.equal(completion.status, 200, await completion.clone().text());
    }

    const hooks = await eventually('three webhook deliveries', async () => {
      const received = receiver.requests.filter((request) => request.path === '/budget-hook');
      return received.length >= 3 ? received : undefined;
    });
    const severities = hooks.map((request) => JSON.parse(request.raw.toString())).sort((a, b) => a.details.threshold - b.details.threshold);
    assert.deepEqual(severities.map((body) => [body.details.threshold, body.severity]), [
      [0.5, 'WARNING'],
      [0.8, 'HIGH'],
      [1, 'CRITICAL'],
    ]);
    for (const body of severities) assert.match(body.title, /^\[gw\] /);

    const mails = await eventually('three emails', async () => (inbox.messages.length >= 3 ? inbox.messages : undefined));
    assert.ok(mails.every((mail) => mail.to.includes('finance@example.com')));
    assert.ok(mails.some((mail) => /Severity: CRITICAL/.test(mail.raw)));

    const slack = await eventually('three Slack messages', async () => {
      const received = receiver.requests.filter((request) => request.path === '/slack/services/T/B/X');
      return received.length >= 3 ? received : undefined;
    });
    assert.deepEqual(slack.map((request) => JSON.parse(request.raw.toString()).blocks[1].text.text.split('\n')[0]).sort(), [
      '*Severity:* CRITICAL',
      '*Severity:* HIGH',
      '*Severity:* WARNING',
    ]);
  });
});
