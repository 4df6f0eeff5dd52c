import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { GatewayEvent, GatewayEventKind, Severity } from '../../src/lib/event-bus.js';
import { TEST_DATABASES } from '../helpers/test-databases.js';
import { type AlertsTestApp, startAlertsTestApp } from './alerts-fixtures/alerts-test-app.js';
import { type HttpsReceiver, startHttpsReceiver } from './alerts-fixtures/https-receiver.js';
import { createTestCertificates, type TestCertificates } from './alerts-fixtures/test-certificates.js';

describe('operational events reach the channels chosen for them', () => {
  let certificates: TestCertificates;
  let receiver: HttpsReceiver;
  let harness: AlertsTestApp;

  before(async () => {
    certificates = createTestCertificates();
    receiver = await startHttpsReceiver(certificates, (request) => (request.path === '/slow' ? { status: 200, delayMs: 5000 } : { status: 200 }));
    harness = await startAlertsTestApp({
      databaseUrl: await TEST_DATABASES[0].create(),
      allowedHosts: [`127.0.0.1:${receiver.port}`],
      caFile: certificates.caFile,
      deliveryTimeoutMs: 400,
    });
  });
  after(async () => {
    await harness.close();
    await receiver.close();
    certificates.remove();
  });

  async function webhook(path: string, options: { events?: GatewayEventKind[]; key?: string; isActive?: boolean } = {}) {
    const response = await harness.call(
      'POST',
      '/gw/channels',
      { name: path, channel_type: 'webhook', config: { url: receiver.url(path) }, is_active: options.isActive ?? true, ...(options.events ? { events: options.events } : {}) },
      options.key,
    );
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.id as string;
  }

  function event(kind: GatewayEventKind, orgId: string | null, severity: Severity, details: Record<string, unknown> = {}, channelIds?: string[]): GatewayEvent {
    return { kind, orgId, severity, title: `${kind} happened`, message: `details of ${kind}`, details, occurredAt: Date.now(), ...(channelIds ? { channelIds } : {}) };
  }

  const bodies = (path: string) => receiver.requests.filter((request) => request.path === path).map((request) => JSON.parse(request.raw.toString()));

  test('a budget crossing 50/80/100% delivers three events with rising severity', async () => {
    await webhook('/budget');
    const thresholds: Array<[number, Severity]> = [
      [0.5, 'WARNING'],
      [0.8, 'HIGH'],
      [1, 'CRITICAL'],
    ];
    for (const [threshold, severity] of thresholds) {
      harness.eventBus.publish(event('budget.threshold', harness.orgs.a, severity, { org_id: harness.orgs.a, threshold, current_balance: 1_000_000_000 }));
      await harness.alerting.dispatcher.idle();
    }
    const received = bodies('/budget');
    assert.deepEqual(received.map((body) => [body.details.threshold, body.severity]), [
      [0.5, 'WARNING'],
      [0.8, 'HIGH'],
      [1, 'CRITICAL'],
    ]);
    for (const body of received) {
      assert.match(body.title, /^\[gw\] budget\.threshold happened$/);
      assert.equal(body.service, 'gw-backend');
      assert.equal(body.details.org_id, harness.orgs.a);
      assert.equal(body.details.event, 'budget.threshold');
    }
  });

  test('destinations per threshold: a route for 100% replaces the subscribers for that threshold only', async () => {
    const org = harness.orgs.b;
    const key = harness.keys.b;
    const subscriber = await webhook('/route-subscriber', { key });
    const escalation = await webhook('/route-escalation', { key, events: ['llm.error'] });
    await harness.call('PUT', '/gw/alert-routes', { event_kind: 'budget.threshold', threshold: 100, channel_ids: [subscriber, escalation] }, key);
    harness.eventBus.publish(event('budget.threshold', org, 'WARNING', { threshold: 50 }));
    harness.eventBus.publish(event('budget.threshold', org, 'CRITICAL', { threshold: 1 }));
    await harness.alerting.dispatcher.idle();
    assert.deepEqual(bodies('/route-subscriber').map((body) => body.severity).sort(), ['CRITICAL', 'WARNING']);
    assert.deepEqual(bodies('/route-escalation').map((body) => body.severity), ['CRITICAL']);

    // channelIds chosen by the producer win over routes and subscriptions.
    harness.eventBus.publish(event('budget.threshold', org, 'HIGH', { threshold: 0.8 }, [escalation]));
    await harness.alerting.dispatcher.idle();
    assert.deepEqual(bodies('/route-escalation').map((body) => body.severity), ['CRITICAL', 'HIGH']);
    assert.equal(bodies('/route-subscriber').length, 2);
  });

  test('other kinds go to the channels subscribed to them; inactive channels get nothing', async () => {
    await webhook('/kinds-errors', { events: ['llm.error', 'guardrail.triggered', 'key.created', 'key.revoked'] });
    await webhook('/kinds-default');
    await webhook('/kinds-inactive', { events: ['llm.error'], isActive: false });
    for (const kind of ['llm.error', 'guardrail.triggered', 'key.created', 'key.revoked'] as const) {
      harness.eventBus.publish(event(kind, harness.orgs.a, kind === 'llm.error' ? 'HIGH' : 'INFO', { request_id: 'req_1', model: 'gpt-x', key_alias: 'sk-...abcd' }));
    }
    await harness.alerting.dispatcher.idle();
    assert.deepEqual(bodies('/kinds-errors').map((body) => body.details.event).sort(), ['guardrail.triggered', 'key.created', 'key.revoked', 'llm.error']);
    assert.equal(bodies('/kinds-default').length, 0);
    assert.equal(bodies('/kinds-inactive').length, 0);
    const llmError = bodies('/kinds-errors').find((body) => body.details.event === 'llm.error');
    assert.deepEqual([llmError.details.request_id, llmError.details.model, llmError.details.key_alias], ['req_1', 'gpt-x', 'sk-...abcd']);
  });

  test('an org-less provider.outage reaches the subscribed channels of every org', async () => {
    await webhook('/outage-a', { events: ['provider.outage'] });
    await webhook('/outage-b', { events: ['provider.outage'], key: harness.keys.b });
    harness.eventBus.publish(event('provider.outage', null, 'CRITICAL', { provider: 'openai' }));
    await harness.alerting.dispatcher.idle();
    assert.equal(bodies('/outage-a').length, 1);
    assert.equal(bodies('/outage-b').length, 1);
    assert.equal(bodies('/outage-a')[0].details.org_id, undefined);
  });

  test('a slow receiver fails after the deadline without holding back other deliveries or the publisher', async () => {
    const slow = await webhook('/slow', { events: ['llm.error'], key: harness.keys.b });
    await webhook('/fast', { events: ['llm.error'], key: harness.keys.b });
    // publish() only queues the listener; delivery runs after the producer's stack.
    harness.eventBus.publish(event('llm.error', harness.orgs.b, 'HIGH', { request_id: 'req_slow' }));
    assert.equal(receiver.requests.filter((request) => request.path === '/fast').length, 0);
    // The fast receiver gets its copy while the slow one is still pending.
    await receiver.waitFor(1, '/fast');
    const slowLog = await harness.alerting.deliveryLog.list(harness.orgs.b, slow, 5);
    assert.equal(slowLog.length, 0, 'the slow delivery has not finished yet');
    await harness.alerting.dispatcher.idle();
    const [entry] = await harness.alerting.deliveryLog.list(harness.orgs.b, slow, 5);
    assert.equal(entry.delivered, false);
    assert.equal(entry.eventKind, 'llm.error');
    assert.match(entry.error ?? '', /timeout/);
  });
});
