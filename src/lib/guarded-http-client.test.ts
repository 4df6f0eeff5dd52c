import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestCertificates, type TestCertificates } from '../../test/e2e/alerts-fixtures/test-certificates.js';
import { type HttpsReceiver, startHttpsReceiver } from '../../test/e2e/alerts-fixtures/https-receiver.js';
import { createGuardedHttpClient, DEFAULT_DELIVERY_TIMEOUT_MS, GuardedRequestError } from './guarded-http-client.js';
import type { HostLookup } from './ssrf-guard.js';

let certificates: TestCertificates;
let receiver: HttpsReceiver;

before(async () => {
  certificates = createTestCertificates();
  receiver = await startHttpsReceiver(certificates, (request) => {
    if (request.path === '/slow') return { status: 200, delayMs: 2000 };
    if (request.path === '/redirect') return { status: 302, headers: { location: '/ok' } };
    if (request.path === '/big') return { status: 200, body: 'x'.repeat(5000) };
    return { status: 200, body: '{"ok":true}' };
  });
});

after(async () => {
  await receiver.close();
  certificates.remove();
});

test('the receiver deadline defaults to the spec value of 10 seconds', async () => {
  assert.equal(DEFAULT_DELIVERY_TIMEOUT_MS, 10_000);
  const client = createGuardedHttpClient();
  assert.equal(client.timeoutMs, 10_000);
  await client.close();
});

test('test mode posts to an allowed host over HTTPS with the test CA, Content-Type fixed', async () => {
  const client = createGuardedHttpClient({ allowedHosts: [`127.0.0.1:${receiver.port}`], caPem: certificates.caPem });
  const response = await client.postJson(receiver.url('/ok'), '{"a":1}', { 'Content-Type': 'text/plain', 'X-Custom': 'yes' });
  assert.equal(response.status, 200);
  assert.equal(response.body, '{"ok":true}');
  const received = receiver.requests.at(-1);
  assert.equal(received?.raw.toString(), '{"a":1}');
  assert.equal(received?.headers['content-type'], 'application/json');
  assert.equal(received?.headers['x-custom'], 'yes');
  await client.close();
});

test('an allowed host without the test CA fails TLS verification', async () => {
  const client = createGuardedHttpClient({ allowedHosts: [`127.0.0.1:${receiver.port}`] });
  await assert.rejects(client.postJson(receiver.url('/ok'), '{}'), (error: GuardedRequestError) => error.kind === 'network');
  await client.close();
});

test('redirects are returned, not followed', async () => {
  const client = createGuardedHttpClient({ allowedHosts: [`127.0.0.1:${receiver.port}`], caPem: certificates.caPem });
  const before = receiver.requests.length;
  const response = await client.postJson(receiver.url('/redirect'), '{}');
  assert.equal(response.status, 302);
  assert.equal(receiver.requests.length, before + 1);
  await client.close();
});

test('a slow receiver times out at the injected deadline', async () => {
  const client = createGuardedHttpClient({ allowedHosts: [`127.0.0.1:${receiver.port}`], caPem: certificates.caPem, timeoutMs: 300 });
  await assert.rejects(client.postJson(receiver.url('/slow'), '{}'), (error: GuardedRequestError) => {
    assert.equal(error.kind, 'timeout');
    assert.match(error.message, /within 300 ms/);
    return true;
  });
  await client.close();
});

test('oversized responses fail', async () => {
  const client = createGuardedHttpClient({ allowedHosts: [`127.0.0.1:${receiver.port}`], caPem: certificates.caPem, maxResponseBytes: 1000 });
  await assert.rejects(client.postJson(receiver.url('/big'), '{}'), (error: GuardedRequestError) => error.kind === 'too_large');
  await client.close();
});

test('with test mode off, private destinations are blocked before any socket opens', async () => {
  const client = createGuardedHttpClient({ caPem: certificates.caPem });
  const before = receiver.requests.length;
  for (const url of [receiver.url('/ok'), `https://localhost:${receiver.port}/ok`, `https://[::1]:${receiver.port}/ok`, `http://127.0.0.1:${receiver.port}/ok`]) {
    await assert.rejects(client.postJson(url, '{}'), (error: GuardedRequestError) => error.kind === 'blocked', url);
  }
  assert.equal(receiver.requests.length, before);
  await client.close();
});

test('DNS rebinding: the connection uses the addresses checked at connect time, so a second answer pointing inside is blocked', async () => {
  let calls = 0;
  // First answer (the URL check) is public; the answer at connect time points at loopback.
  const rebinding: HostLookup = async () => (calls++ === 0 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);
  const client = createGuardedHttpClient({ lookup: rebinding, caPem: certificates.caPem });
  const before = receiver.requests.length;
  await assert.rejects(client.postJson(`https://rebind.example.com:${receiver.port}/ok`, '{}'), (error: GuardedRequestError) => {
    assert.equal(error.kind, 'blocked');
    assert.match(error.message, /loopback/);
    return true;
  });
  assert.equal(calls, 2);
  assert.equal(receiver.requests.length, before);
  await client.close();
});
