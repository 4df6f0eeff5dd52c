import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createSsrfGuard, forbiddenAddressReason, type HostLookup } from './ssrf-guard.js';

const publicLookup: HostLookup = async () => [{ address: '93.184.216.34', family: 4 }];

test('forbiddenAddressReason blocks every non-public range and allows public unicast', () => {
  const blocked = {
    '127.0.0.1': /loopback/,
    '10.1.2.3': /RFC 1918/,
    '172.16.0.1': /RFC 1918/,
    '192.168.1.1': /RFC 1918/,
    '100.64.0.1': /carrier-grade NAT/,
    '169.254.169.254': /metadata/,
    '169.254.1.1': /link-local/,
    '0.0.0.0': /unspecified/,
    '255.255.255.255': /broadcast/,
    '224.0.0.1': /multicast/,
    '::1': /loopback/,
    '::': /unspecified/,
    'fe80::1': /link-local/,
    'fc00::1': /unique-local/,
    'fd00:ec2::254': /metadata/,
    '::ffff:127.0.0.1': /IPv4-mapped/,
    '::ffff:8.8.8.8': /IPv4-mapped/,
    '::7f00:1': /IPv4-compatible/,
    '64:ff9b::a00:1': /NAT64/,
    '2002:a00:1::': /6to4/,
    'ff02::1': /multicast/,
  };
  for (const [address, reason] of Object.entries(blocked)) {
    assert.match(forbiddenAddressReason(address) ?? 'allowed', reason, address);
  }
  assert.equal(forbiddenAddressReason('8.8.8.8'), null);
  assert.equal(forbiddenAddressReason('2606:4700:4700::1111'), null);
});

test('checkUrl rejects http, credentials and every private or metadata destination (test mode off)', async () => {
  const guard = createSsrfGuard({ lookup: publicLookup });
  const cases: Array<[string, RegExp]> = [
    ['http://example.com/hook', /https/],
    ['ftp://example.com/hook', /https/],
    ['not a url', /valid URL/],
    ['https://user:pass@example.com/', /credentials/],
    ['https://127.0.0.1/hook', /loopback/],
    ['https://10.0.0.5/hook', /RFC 1918/],
    ['https://172.16.3.4/hook', /RFC 1918/],
    ['https://192.168.0.10:8443/hook', /RFC 1918/],
    ['https://169.254.169.254/latest/meta-data/', /metadata/],
    ['https://[::1]/hook', /loopback/],
    ['https://[::ffff:127.0.0.1]/hook', /IPv4-mapped/],
    ['https://[fd00:ec2::254]/', /metadata/],
    ['https://100.64.1.1/', /carrier-grade/],
    ['https://2130706433/', /loopback/],
    ['https://metadata.google.internal/computeMetadata/v1/', /metadata/],
  ];
  for (const [url, reason] of cases) {
    await assert.rejects(guard.checkUrl(url), (error: Error) => {
      assert.equal(error.name, 'SsrfBlockedError', url);
      assert.match(error.message, reason, url);
      return true;
    });
  }
  assert.equal((await guard.checkUrl('https://hooks.example.com/x')).addresses[0].address, '93.184.216.34');
});

test('a host name resolving to loopback is rejected through the real resolver', async () => {
  await assert.rejects(createSsrfGuard().checkUrl('https://localhost/hook'), /resolves to a blocked address: .*loopback/);
});

test('every resolved address must be public, not just the first', async () => {
  const mixed: HostLookup = async () => [
    { address: '93.184.216.34', family: 4 },
    { address: '10.0.0.1', family: 4 },
  ];
  await assert.rejects(createSsrfGuard({ lookup: mixed }).checkUrl('https://mixed.example.com/'), /RFC 1918/);
  const failing: HostLookup = async () => {
    throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
  };
  await assert.rejects(createSsrfGuard({ lookup: failing }).checkUrl('https://missing.example.com/'), /does not resolve \(ENOTFOUND\)/);
});

test('test mode allows only the listed host or host:port, and never http', async () => {
  const guard = createSsrfGuard({ allowedHosts: ['127.0.0.1:9443', 'localhost'] });
  assert.equal((await guard.checkUrl('https://127.0.0.1:9443/x')).allowedByTestMode, true);
  assert.equal((await guard.checkUrl('https://localhost:1234/x')).allowedByTestMode, true);
  await assert.rejects(guard.checkUrl('https://127.0.0.1:9444/x'), /loopback/);
  await assert.rejects(guard.checkUrl('http://127.0.0.1:9443/x'), /https/);
});
