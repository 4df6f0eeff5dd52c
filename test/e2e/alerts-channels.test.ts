import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { TEST_DATABASES } from '../helpers/test-databases.js';
import { type AlertsTestApp, startAlertsTestApp } from './alerts-fixtures/alerts-test-app.js';

for (const database of TEST_DATABASES) {
  describe(`alert channels CRUD (${database.name})`, { skip: database.skip }, () => {
    let harness: AlertsTestApp;
    // Public addresses come from a fake resolver, so no test touches the network.
    const publicLookup = async () => [{ address: '93.184.216.34', family: 4 as const }];

    before(async () => {
      harness = await startAlertsTestApp({ databaseUrl: await database.create(), lookup: publicLookup });
    });
    after(async () => harness.close());

    const webhook = {
      name: 'ops webhook',
      channel_type: 'webhook',
      config: { url: 'https://hooks.example.com/gw', secret: 'whsec_0123456789abcdef', headers: { 'X-Team': 'platform-secret-value' } },
      is_active: true,
    };

    test('create returns the record with secrets masked and default subscriptions', async () => {
      const created = await harness.call('POST', '/gw/channels', webhook);
      assert.equal(created.status, 200);
      assert.equal(created.body.object, 'alert_channel');
      assert.equal(created.body.channel_type, 'webhook');
      assert.equal(created.body.is_active, true);
      assert.deepEqual(created.body.events, ['budget.threshold']);
      assert.equal(created.body.config.url, 'https://hooks.example.com/gw');
      assert.equal(created.body.config.secret, '***cdef');
      assert.deepEqual(created.body.config.headers, { 'X-Team': '***alue' });
      assert.ok(!JSON.stringify(created.body).includes('whsec_0123456789abcdef'));
      assert.ok(!JSON.stringify(created.body).includes('platform-secret-value'));
    });

    test('secrets are encrypted at rest', async () => {
      const created = await harness.call('POST', '/gw/channels', { ...webhook, name: 'at rest' });
      const row = await harness.database.db.selectFrom('alert_channels').selectAll().where('id', '=', created.body.id).executeTakeFirstOrThrow();
      const stored = JSON.stringify(row);
      assert.ok(!stored.includes('whsec_0123456789abcdef'));
      assert.ok(!stored.includes('platform-secret-value'));
      assert.ok(row.secrets_ciphertext && row.secrets_ciphertext.startsWith('v1.'));
      const channel = await harness.alerting.channels.get(harness.orgs.a, created.body.id);
      assert.equal(channel?.type === 'webhook' && channel.config.secret, 'whsec_0123456789abcdef');
    });

    test('list, get, update and delete are scoped to the org of the bearer key', async () => {
      const created = await harness.call('POST', '/gw/channels', { ...webhook, name: 'scoped', events: ['llm.error', 'budget.threshold', 'llm.error'] });
      assert.deepEqual(created.body.events, ['llm.error', 'budget.threshold']);
      const id = created.body.id;
      const list = await harness.call('GET', '/gw/channels');
      assert.equal(list.body.object, 'list');
      assert.ok(list.body.data.some((channel: { id: string }) => channel.id === id));
      assert.equal((await harness.call('GET', '/gw/channels', undefined, harness.keys.b)).body.data.length, 0);
      assert.equal((await harness.call('GET', `/gw/channels/${id}`, undefined, harness.keys.b)).status, 404);
      assert.equal((await harness.call('GET', `/gw/channels/${id}`)).body.name, 'scoped');

      const updated = await harness.call('PATCH', `/gw/channels/${id}`, { is_active: false, name: 'renamed', config: { secret: '***cdef', url: 'https://other.example.com/x' } });
      assert.equal(updated.status, 200);
      assert.equal(updated.body.is_active, false);
      assert.equal(updated.body.name, 'renamed');
      assert.equal(updated.body.config.url, 'https://other.example.com/x');
      const stored = await harness.alerting.channels.get(harness.orgs.a, id);
      assert.equal(stored?.isActive, false);
      // The masked secret sent back unchanged keeps the stored secret.
      assert.equal(stored?.type === 'webhook' && stored.config.secret, 'whsec_0123456789abcdef');

      const removedSecret = await harness.call('PATCH', `/gw/channels/${id}`, { config: { secret: null } });
      assert.equal(removedSecret.body.config.secret, undefined);

      assert.equal((await harness.call('DELETE', `/gw/channels/${id}`, undefined, harness.keys.b)).status, 404);
      assert.deepEqual((await harness.call('DELETE', `/gw/channels/${id}`)).body, { id, object: 'alert_channel', deleted: true });
      assert.equal((await harness.call('GET', `/gw/channels/${id}`)).status, 404);
    });

    test('requests without a valid bearer key are rejected', async () => {
      const response = await harness.call('GET', '/gw/channels', undefined, 'wrong');
      assert.equal(response.status, 401);
      assert.equal(response.body.error.code, 'invalid_api_key');
    });

    test('validation errors are 400 invalid_request naming the field', async () => {
      const cases: Array<[unknown, RegExp]> = [
        [{ channel_type: 'webhook', config: { url: 'https://a.example.com' } }, /'name'/],
        [{ name: 'x', channel_type: 'pager', config: {} }, /'channel_type'/],
        [{ name: 'x', channel_type: 'webhook', config: {} }, /'config\.url'/],
        [{ name: 'x', channel_type: 'webhook', config: { url: 'http://hooks.example.com/x' } }, /'config\.url'.*https/],
        [{ name: 'x', channel_type: 'webhook', config: { url: 'https://a.example.com', headers: { 'Bad Header': 'v' } } }, /'config\.headers/],
        [{ name: 'x', channel_type: 'webhook', config: { url: 'https://a.example.com', extra: 1 } }, /'config'.*extra/],
        [{ name: 'x', channel_type: 'webhook', config: { url: 'https://a.example.com' }, is_active: 'yes' }, /'is_active'/],
        [{ name: 'x', channel_type: 'webhook', config: { url: 'https://a.example.com' }, events: ['budget.exceeded'] }, /'events\.0'/],
        [{ name: 'x', channel_type: 'email', config: { to: ['not-an-address'] } }, /'config\.to/],
        [{ name: 'x', channel_type: 'slack', config: { webhook_url: 'http://hooks.slack.com/services/x' } }, /'config\.webhook_url'/],
        [{ name: 'x', channel_type: 'jira', config: { site_url: 'https://acme.atlassian.net', project_key: 'OPS', email: 'a@b.co' } }, /'config\.api_token'/],
      ];
      for (const [body, message] of cases) {
        const response = await harness.call('POST', '/gw/channels', body);
        assert.equal(response.status, 400, JSON.stringify(body));
        assert.equal(response.body.error.code, 'invalid_request');
        assert.match(response.body.error.message, message, JSON.stringify(body));
      }
      const created = await harness.call('POST', '/gw/channels', { ...webhook, name: 'patch validation' });
      const patched = await harness.call('PATCH', `/gw/channels/${created.body.id}`, { channel_type: 'slack' });
      assert.equal(patched.status, 400);
      assert.match(patched.body.error.message, /'channel_type'/);
      const badUrl = await harness.call('PATCH', `/gw/channels/${created.body.id}`, { config: { url: 'https://10.0.0.1/x' } });
      assert.equal(badUrl.status, 400);
      assert.match(badUrl.body.error.message, /'config\.url'.*RFC 1918/);
    });

    test('every channel type can be created and masks its secrets', async () => {
      const bodies = [
        { name: 'mail', channel_type: 'email', config: { to: 'oncall@example.com' } },
        { name: 'slack', channel_type: 'slack', config: { webhook_url: 'https://hooks.slack.com/services/T0/B0/abcdefWXYZ' } },
        { name: 'teams', channel_type: 'teams', config: { webhook_url: 'https://example.webhook.office.com/webhookb2/zzzz9876' } },
        { name: 'jira', channel_type: 'jira', config: { site_url: 'https://acme.atlassian.net', project_key: 'OPS', email: 'bot@acme.com', api_token: 'ATATT3xFfGF0-token-7777' } },
      ];
      const results = [];
      for (const body of bodies) {
        const response = await harness.call('POST', '/gw/channels', body);
        assert.equal(response.status, 200, JSON.stringify(response.body));
        results.push(response.body);
      }
      assert.deepEqual(results[0].config, { to: ['oncall@example.com'] });
      assert.equal(results[1].config.webhook_url, '***WXYZ');
      assert.equal(results[2].config.webhook_url, '***9876');
      assert.equal(results[3].config.api_token, '***7777');
      assert.equal(results[3].config.issue_type, 'Task');
    });

    test('alert routes: destinations per threshold, validated against the org channels', async () => {
      const channel = await harness.call('POST', '/gw/channels', { ...webhook, name: 'route target' });
      const put = await harness.call('PUT', '/gw/alert-routes', { threshold: 80, channel_ids: [channel.body.id] });
      assert.equal(put.status, 200);
      assert.deepEqual(put.body.data.map((route: { threshold: number; event_kind: string }) => [route.event_kind, route.threshold]), [['budget.threshold', 0.8]]);
      assert.deepEqual(await harness.alerting.alertRoutes.channelIdsFor(harness.orgs.a, 'budget.threshold', 0.8), [channel.body.id]);
      assert.equal(await harness.alerting.alertRoutes.channelIdsFor(harness.orgs.a, 'budget.threshold', 0.5), undefined);

      const foreign = await harness.call('PUT', '/gw/alert-routes', { threshold: 0.5, channel_ids: [channel.body.id] }, harness.keys.b);
      assert.equal(foreign.status, 400);
      assert.match(foreign.body.error.message, /'channel_ids'/);

      const admin = await harness.call('PUT', '/api/admin/alert-routes', { org_id: harness.orgs.a, threshold: 1, channel_ids: [channel.body.id] }, harness.masterKey);
      assert.equal(admin.status, 200);
      const listed = await harness.call('GET', `/api/admin/alert-routes?org_id=${harness.orgs.a}`, undefined, harness.masterKey);
      assert.deepEqual(listed.body.data.map((route: { threshold: number }) => route.threshold), [0.8, 1]);
      const missingOrg = await harness.call('GET', '/api/admin/alert-routes', undefined, harness.masterKey);
      assert.equal(missingOrg.status, 400);

      const cleared = await harness.call('PUT', '/gw/alert-routes', { threshold: 0.8, channel_ids: [] });
      assert.deepEqual(cleared.body.data.map((route: { threshold: number }) => route.threshold), [1]);
    });
  });
}

describe('destination rules with test mode off', () => {
  let harness: AlertsTestApp;
  before(async () => {
    harness = await startAlertsTestApp({ databaseUrl: await TEST_DATABASES[0].create() });
  });
  after(async () => harness.close());

  test('http, loopback, private, metadata and IPv4-mapped destinations are rejected at creation', async () => {
    const urls = [
      'http://hooks.example.com/x',
      'https://127.0.0.1/x',
      'https://10.1.2.3/x',
      'https://172.16.0.1/x',
      'https://192.168.1.20/x',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/x',
      'https://[::ffff:127.0.0.1]/x',
      'https://localhost/x',
      'https://metadata.google.internal/x',
      'https://100.64.0.1/x',
      'https://[fd00:ec2::254]/x',
    ];
    for (const url of urls) {
      const response = await harness.call('POST', '/gw/channels', { name: 'bad', channel_type: 'webhook', config: { url }, is_active: true });
      assert.equal(response.status, 400, url);
      assert.equal(response.body.error.code, 'invalid_request');
      assert.match(response.body.error.message, /'config\.url'/, url);
    }
    for (const [type, config] of [
      ['slack', { webhook_url: 'https://127.0.0.1/services/x' }],
      ['teams', { webhook_url: 'https://192.168.0.1/x' }],
      ['jira', { site_url: 'https://10.0.0.1', project_key: 'OPS', email: 'a@b.co', api_token: 't' }],
    ] as const) {
      const response = await harness.call('POST', '/gw/channels', { name: 'bad', channel_type: type, config });
      assert.equal(response.status, 400, type);
    }
    assert.equal((await harness.call('GET', '/gw/channels')).body.data.length, 0);
  });
});
