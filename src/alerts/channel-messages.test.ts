import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeThreshold } from './alert-route-store.js';
import { maskChannelConfig, maskSecret } from './channel-record.js';
import type { AlertChannel, NotificationPayload } from './channel-types.js';
import { buildEmailMessage } from './email-notifier.js';
import { buildJiraIssue, jiraIssueUrl } from './jira-notifier.js';
import { buildNotificationPayload } from './notification-payload.js';
import { mergeChannelConfig } from './parse-channel-input.js';
import { buildSlackMessage } from './slack-notifier.js';
import { buildTeamsMessage } from './teams-notifier.js';

const payload: NotificationPayload = {
  title: '[gw] <Budget> & more',
  message: 'spend at 100%',
  severity: 'CRITICAL',
  details: Object.fromEntries(Array.from({ length: 12 }, (_, index) => [`k${index}`, index])),
  service: 'gw-backend',
};

test('event payloads prefix the title once and carry the org and event kind', () => {
  const built = buildNotificationPayload({ kind: 'budget.threshold', orgId: 'o1', severity: 'WARNING', title: 'Budget 50%', message: 'm', details: { threshold: 0.5 }, occurredAt: 0 });
  assert.deepEqual(built, { title: '[gw] Budget 50%', message: 'm', severity: 'WARNING', details: { threshold: 0.5, org_id: 'o1', event: 'budget.threshold' }, service: 'gw-backend' });
  assert.equal(buildNotificationPayload({ kind: 'llm.error', orgId: null, severity: 'HIGH', title: '[gw] x', message: '', details: {}, occurredAt: 0 }).title, '[gw] x');
});

test('slack escapes mrkdwn and respects the 10-field limit', () => {
  const message = buildSlackMessage(payload) as { blocks: Array<{ type: string; fields?: unknown[]; text?: { text: string } }> };
  assert.equal(message.blocks[2].fields?.length, 10);
  assert.equal(message.blocks[0].text?.text, '[gw] <Budget> & more');
  assert.ok(!JSON.stringify(message.blocks[1]).includes('<Budget>'));
});

test('teams card lists severity and every detail as facts', () => {
  const card = buildTeamsMessage(payload) as { attachments: Array<{ content: { body: Array<{ facts?: unknown[] }> } }> };
  assert.equal(card.attachments[0].content.body[2].facts?.length, 14);
});

test('jira issue keeps the site context path and bounds the summary', () => {
  const config = { site_url: 'https://jira.example.com/ctx/', project_key: 'OPS', issue_type: 'Task', email: 'a@b.co', api_token: 't' };
  assert.equal(jiraIssueUrl(config), 'https://jira.example.com/ctx/rest/api/3/issue');
  const issue = buildJiraIssue(config, { ...payload, title: 'x'.repeat(400) }) as { fields: { summary: string; labels: string[] } };
  assert.equal(issue.fields.summary.length, 255);
  assert.deepEqual(issue.fields.labels, ['gw', 'severity-critical']);
});

test('email text lists severity and details', () => {
  const { subject, text } = buildEmailMessage(payload);
  assert.equal(subject, payload.title);
  assert.match(text, /Severity: CRITICAL\n/);
  assert.match(text, / {2}k11: 11\n/);
});

test('masking shows at most the last 4 characters; a masked value sent back keeps the secret', () => {
  assert.equal(maskSecret('short'), '***');
  assert.equal(maskSecret('0123456789abcdef'), '***cdef');
  const channel = {
    id: 'c',
    orgId: 'o',
    name: 'n',
    type: 'webhook',
    config: { url: 'https://x.example.com', secret: '0123456789abcdef', headers: { 'X-Key': 'header-secret-value' } },
    isActive: true,
    events: ['budget.threshold'],
    createdAt: 0,
    updatedAt: 0,
  } as AlertChannel;
  assert.deepEqual(maskChannelConfig(channel), { url: 'https://x.example.com', secret: '***cdef', headers: { 'X-Key': '***alue' } });
  assert.deepEqual(mergeChannelConfig(channel, { secret: '***cdef', headers: { 'X-Key': '***alue', 'X-New': 'v' } }), {
    url: 'https://x.example.com',
    secret: '0123456789abcdef',
    headers: { 'X-Key': 'header-secret-value', 'X-New': 'v' },
  });
  assert.deepEqual(mergeChannelConfig(channel, { secret: null, headers: null }), { url: 'https://x.example.com' });
});

test('thresholds are read as fractions, or as percentages above 1', () => {
  assert.equal(normalizeThreshold(0.8), 0.8);
  assert.equal(normalizeThreshold(80), 0.8);
  assert.equal(normalizeThreshold('50'), 0.5);
  assert.equal(normalizeThreshold(1), 1);
  assert.equal(normalizeThreshold(100), 1);
  assert.equal(normalizeThreshold(undefined), null);
  assert.equal(normalizeThreshold(-1), null);
});
