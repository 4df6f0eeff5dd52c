import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { canonicalJson } from '../../src/lib/canonical-json.js';
import { TEST_DATABASES } from '../helpers/test-databases.js';
import { type AlertsTestApp, startAlertsTestApp } from './alerts-fixtures/alerts-test-app.js';
import { type HttpsReceiver, startHttpsReceiver } from './alerts-fixtures/https-receiver.js';
import { createTestCertificates, type TestCertificates } from './alerts-fixtures/test-certificates.js';

describe('webhook delivery to an HTTPS receiver (test mode on)', () => {
  let certificates: TestCertificates;
  let receiver: HttpsReceiver;
  let harness: AlertsTestApp;
  const secret = 'whsec_test_secret_value_42';

  before(async () => {
    certificates = createTestCertificates();
    receiver = await startHttpsReceiver(certificates, (request) => {
      if (request.path === '/fail') return { status: 500 };
      if (request.path === '/slow') return { status: 200, delayMs: 3000 };
      if (request.path === '/redirect') return { status: 307, headers: { location: '/hook' } };
      return { status: 204 };
    });
    harness = await startAlertsTestApp({
      databaseUrl: await TEST_DATABASES[0].create(),
      allowedHosts: [`127.0.0.1:${receiver.port}`],
      caFile: certificates.caFile,
      // Well under the slow receiver's 3 s, well over a first TLS handshake on a loaded CI machine
      // (at 300 ms the first delivery of the file once timed out there).
      deliveryTimeoutMs: 1500,
    });
  });
  after(async () => {
    await harness.close();
    await receiver.close();
    certificates.remove();
  });

  async function createWebhook(path: string, extra: Record<string, unknown> = {}) {
    const response = await harness.call('POST', '/gw/channels', { name: `hook ${path}`, channel_type: 'webhook', config: { url: receiver.url(path), ...extra }, is_active: true });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.id as string;
  }

  test('the test call sends canonical JSON signed over the exact bytes, with custom headers', async () => {
    const id = await createWebhook('/hook', {
      secret,
      headers: { 'X-Team': 'platform', Authorization: 'Bearer receiver-token', 'Content-Type': 'text/plain', 'X-Gw-Signature': 'forged' },
    });
    const before = receiver.requests.length;
    const result = await harness.call('POST', `/gw/channels/${id}/test`);
    assert.equal(result.status, 200);
    assert.equal(result.body.delivered, true);
    assert.equal(result.body.status, 204);
    assert.equal(result.body.error, null);
    assert.equal(typeof result.body.latency_ms, 'number');

    assert.equal(receiver.requests.length, before + 1);
    const request = receiver.requests.at(-1)!;
    assert.equal(request.method, 'POST');
    assert.equal(request.path, '/hook');
    const raw = request.raw.toString('utf8');
    const payload = JSON.parse(raw);

    // Exact bytes: canonical JSON (sorted keys at every depth, no spaces), so re-serialising is the identity.
    assert.equal(raw, canonicalJson(payload));
    assert.deepEqual(Object.keys(payload), ['details', 'message', 'service', 'severity', 'title']);
    assert.deepEqual(Object.keys(payload.details), [...Object.keys(payload.details)].sort());
    assert.ok(raw.startsWith('{"details":{'));

    // The test payload (SPEC "Events" rule 8).
    assert.equal(payload.severity, 'INFO');
    assert.equal(payload.details.test, true);
    assert.equal(payload.service, 'gw-backend');
    assert.match(payload.title, /^\[gw\] /);
    assert.equal(payload.details.channel_id, id);

    // The receiver's recomputation over the raw body, compared in constant time.
    const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(request.raw).digest('hex')}`);
    const actual = Buffer.from(String(request.headers['x-gw-signature']));
    assert.equal(actual.length, expected.length);
    assert.ok(timingSafeEqual(actual, expected));

    // Custom headers arrive; they cannot override the content type or the signature.
    assert.equal(request.headers['x-team'], 'platform');
    assert.equal(request.headers.authorization, 'Bearer receiver-token');
    assert.equal(request.headers['content-type'], 'application/json');
    assert.equal(request.headers['content-length'], String(request.raw.length));
  });

  test('without a secret no signature header is sent', async () => {
    const id = await createWebhook('/plain');
    assert.equal((await harness.call('POST', `/gw/channels/${id}/test`)).body.delivered, true);
    const request = (await receiver.waitFor(1, '/plain')).at(-1)!;
    assert.equal(request.headers['x-gw-signature'], undefined);
  });

  test('a non-2xx answer is a failure, recorded in the delivery log with its reason', async () => {
    const id = await createWebhook('/fail');
    const result = await harness.call('POST', `/gw/channels/${id}/test`);
    assert.deepEqual({ delivered: result.body.delivered, status: result.body.status }, { delivered: false, status: 500 });
    assert.match(result.body.error, /HTTP 500/);
    const log = await harness.call('GET', `/gw/channels/${id}/deliveries?limit=10`);
    assert.equal(log.status, 200);
    assert.equal(log.body.data.length, 1);
    const [entry] = log.body.data;
    assert.equal(entry.status, 'failed');
    assert.equal(entry.http_status, 500);
    assert.equal(entry.event_kind, 'test');
    assert.equal(entry.test, true);
    assert.match(entry.error, /HTTP 500/);
    assert.ok(Number.isFinite(Date.parse(entry.time)));
    assert.equal(typeof entry.latency_ms, 'number');
    assert.equal((await harness.call('GET', `/gw/channels/${id}/deliveries?limit=0`)).status, 400);
  });

  test('redirects are not followed: a 3xx is a failure and the target is never called', async () => {
    const id = await createWebhook('/redirect');
    const hookCalls = receiver.requests.filter((request) => request.path === '/hook').length;
    const result = await harness.call('POST', `/gw/channels/${id}/test`);
    assert.equal(result.body.delivered, false);
    assert.equal(result.body.status, 307);
    assert.equal(receiver.requests.filter((request) => request.path === '/hook').length, hookCalls);
  });

  test('a receiver slower than the deadline is recorded as a timeout failure', async () => {
    const id = await createWebhook('/slow');
    const result = await harness.call('POST', `/gw/channels/${id}/test`);
    assert.equal(result.body.delivered, false);
    assert.equal(result.body.status, null);
    assert.match(result.body.error, /timeout: no response within 1500 ms/);
    const log = await harness.call('GET', `/gw/channels/${id}/deliveries`);
    assert.match(log.body.data[0].error, /timeout/);
  });

  test('the test call also works with Content-Type application/json and an empty body', async () => {
    const id = await createWebhook('/hook');
    const response = await harness.app.inject({
      method: 'POST',
      url: `/gw/channels/${id}/test`,
      headers: { authorization: `Bearer ${harness.keys.a}`, 'content-type': 'application/json' },
    });
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().delivered, true);
  });

  test('deliveries are checked again at send time: a stored private URL is blocked', async () => {
    const id = await createWebhook('/hook');
    const channel = await harness.alerting.channels.get(harness.orgs.a, id);
    // Simulate a destination that turned private after creation (the stored URL is re-checked on every send).
    await harness.alerting.channels.update(harness.orgs.a, id, { config: { ...(channel!.config as object), url: 'https://10.0.0.8/hook' } as never });
    const result = await harness.call('POST', `/gw/channels/${id}/test`);
    assert.equal(result.body.delivered, false);
    assert.match(result.body.error, /blocked: .*RFC 1918/);
  });
});
