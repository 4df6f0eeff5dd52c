import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import type { NotificationPayload } from './channel-types.js';
import { buildWebhookRequest } from './webhook-notifier.js';

const payload: NotificationPayload = {
  title: '[gw] Budget 80% reached',
  message: 'Org spend crossed 80% — “monthly” budget',
  severity: 'HIGH',
  details: { threshold: 0.8, org_id: 'org_1', nested: { b: 1, a: [2, { d: 4, c: 3 }] } },
  service: 'gw-backend',
};

test('the body is canonical JSON with non-ASCII escaped, and the signature covers exactly it', () => {
  const { body, headers } = buildWebhookRequest({ url: 'https://x.example.com', secret: 's3cret' }, payload);
  assert.equal(
    body,
    '{"details":{"nested":{"a":[2,{"c":3,"d":4}],"b":1},"org_id":"org_1","threshold":0.8},"message":"Org spend crossed 80% \\u2014 \\u201cmonthly\\u201d budget","service":"gw-backend","severity":"HIGH","title":"[gw] Budget 80% reached"}',
  );
  assert.equal(headers['x-gw-signature'], `sha256=${createHmac('sha256', 's3cret').update(Buffer.from(body, 'utf8')).digest('hex')}`);
  assert.equal(headers['content-type'], 'application/json');
});

test('custom headers are sent but cannot override the content type, the signature or framing', () => {
  const { headers } = buildWebhookRequest(
    { url: 'https://x.example.com', headers: { 'X-Team': 'a', 'content-type': 'text/plain', 'X-GW-Signature': 'forged', Host: 'evil', 'Content-Length': '1' } },
    payload,
  );
  assert.deepEqual(headers, { 'x-team': 'a', 'content-type': 'application/json' });
});
