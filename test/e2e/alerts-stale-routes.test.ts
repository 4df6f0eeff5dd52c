import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AlertLogger } from '../../src/alerts/alert-logger.js';
import type { GatewayEvent } from '../../src/lib/event-bus.js';
import { TEST_DATABASES } from '../helpers/test-databases.js';
import { type AlertsTestApp, startAlertsTestApp } from './alerts-fixtures/alerts-test-app.js';
import { type HttpsReceiver, startHttpsReceiver } from './alerts-fixtures/https-receiver.js';
import { createTestCertificates, type TestCertificates } from './alerts-fixtures/test-certificates.js';

const publicLookup = async () => [{ address: '93.184.216.34', family: 4 as const }];

for (const database of TEST_DATABASES) {
  describe(`deleting a channel cleans the alert routes (${database.name})`, { skip: database.skip }, () => {
    let harness: AlertsTestApp;
    before(async () => {
      harness = await startAlertsTestApp({ databaseUrl: await database.create(), lookup: publicLookup });
    });
    after(async () => harness.close());

    const create = async (name: string) =>
      (await harness.call('POST', '/gw/channels', { name, channel_type: 'webhook', config: { url: 'https://hooks.example.com/gw' } })).body.id as string;

    test('a deleted channel leaves every route, and a route left empty is removed', async () => {
      const gone = await create('gone');
      const kept = await create('kept');
      assert.equal((await harness.call('PUT', '/gw/alert-routes', { threshold: 0.25, channel_ids: [gone] })).status, 200);
      assert.equal((await harness.call('PUT', '/gw/alert-routes', { channel_ids: [gone, kept] })).status, 200);
      assert.equal((await harness.call('PUT', '/gw/alert-routes', { event_kind: 'llm.error', channel_ids: [gone] }, harness.keys.a)).status, 200);

      assert.equal((await harness.call('DELETE', `/gw/channels/${gone}`)).status, 200);

      const routes = (await harness.call('GET', '/gw/alert-routes')).body.data as Array<{ event_kind: string; threshold: number | null; channel_ids: string[] }>;
      assert.deepEqual(
        routes.map((route) => [route.event_kind, route.threshold, route.channel_ids]),
        [['budget.threshold', null, [kept]]],
      );
      // The 25% route is gone, so a crossing of 25% uses the catch-all route.
      assert.deepEqual(await harness.alerting.alertRoutes.channelIdsFor(harness.orgs.a, 'budget.threshold', 0.25), [kept]);
    });

    test("deleting a channel leaves other orgs' routes alone", async () => {
      const mine = await create('mine');
      const theirs = (await harness.call('POST', '/gw/channels', { name: 'theirs', channel_type: 'webhook', config: { url: 'https://hooks.example.com/b' } }, harness.keys.b)).body.id;
      await harness.call('PUT', '/gw/alert-routes', { threshold: 0.5, channel_ids: [theirs] }, harness.keys.b);
      await harness.call('DELETE', `/gw/channels/${mine}`);
      assert.deepEqual(await harness.alerting.alertRoutes.channelIdsFor(harness.orgs.b, 'budget.threshold', 0.5), [theirs]);
    });
  });
}

describe('a route without an existing active channel falls back to the subscribed channels', () => {
  let certificates: TestCertificates;
  let receiver: HttpsReceiver;
  let harness: AlertsTestApp;
  const warnings: Array<{ details: object; message: string }> = [];
  const logger: AlertLogger = { info() {}, error() {}, warn: (details, message) => warnings.push({ details, message }) };

  before(async () => {
    certificates = createTestCertificates();
    receiver = await startHttpsReceiver(certificates);
    harness = await startAlertsTestApp({
      databaseUrl: await TEST_DATABASES[0].create(),
      allowedHosts: [`127.0.0.1:${receiver.port}`],
      caFile: certificates.caFile,
      logger,
    });
  });
  after(async () => {
    await harness.close();
    await receiver.close();
    certificates.remove();
  });

  async function webhook(path: string, key: string, options: { isActive?: boolean } = {}) {
    const response = await harness.call('POST', '/gw/channels', { name: path, channel_type: 'webhook', config: { url: receiver.url(path) }, is_active: options.isActive ?? true }, key);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.id as string;
  }

  function crossing(orgId: string, threshold: number): GatewayEvent {
    return { kind: 'budget.threshold', orgId, severity: 'WARNING', title: 'budget', message: 'crossed', details: { threshold }, occurredAt: Date.now() };
  }

  const received = (path: string) => receiver.requests.filter((request) => request.path === path).length;

  test('a key crossing 25% after its routed channel was deleted still notifies the subscribed channels', async () => {
    const key = harness.keys.a;
    const routed = await webhook('/deleted-route', key);
    await webhook('/subscriber', key);
    await harness.call('PUT', '/gw/alert-routes', { threshold: 0.25, channel_ids: [routed] }, key);
    await harness.call('DELETE', `/gw/channels/${routed}`, undefined, key);

    harness.eventBus.publish(crossing(harness.orgs.a, 0.25));
    await harness.alerting.dispatcher.idle();
    assert.equal(received('/subscriber'), 1);
    assert.equal(received('/deleted-route'), 0);
  });

  test('a route whose channels are all inactive or missing falls back, with a warning', async () => {
    const key = harness.keys.b;
    const inactive = await webhook('/inactive-route', key, { isActive: false });
    await webhook('/fallback', key);
    // A route stored before deletions cleaned routes can still name a channel that no longer exists.
    await harness.alerting.alertRoutes.set({ orgId: harness.orgs.b, eventKind: 'budget.threshold', threshold: 0.8, channelIds: [inactive, 'ch_missing'] });
    warnings.length = 0;

    harness.eventBus.publish(crossing(harness.orgs.b, 0.8));
    await harness.alerting.dispatcher.idle();
    assert.equal(received('/fallback'), 1);
    assert.equal(received('/inactive-route'), 0);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0].message, /no existing active channel/);
    assert.deepEqual((warnings[0].details as { routedChannelIds: string[] }).routedChannelIds, [inactive, 'ch_missing']);
  });
});
