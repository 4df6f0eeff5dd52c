import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { adminRequest, startGateway, type RunningGateway } from '../helpers/start-gateway.js';
import { TEST_DATABASES } from '../helpers/test-databases.js';
import { sessionFor } from './dashboard-fixture.js';

// The dashboard's server side without a browser: static files, sessions, CSRF and the aggregates,
// on every database backend (the aggregates are hand-written SQL).
for (const database of TEST_DATABASES) {
  describe(`dashboard API (${database.name})`, { skip: database.skip }, () => {
    let running: RunningGateway;
    let staticDir: string;

    before(async () => {
      staticDir = mkdtempSync(join(tmpdir(), 'gw-dashboard-static-'));
      writeFileSync(join(staticDir, 'index.html'), '<!doctype html><title>gw dashboard test page</title>');
      mkdirSync(join(staticDir, 'assets'));
      writeFileSync(join(staticDir, 'assets', 'index-abc123.js'), 'console.log("dashboard test script");');
      writeFileSync(join(staticDir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
      running = await startGateway({ database: database.name, config: { dashboardDir: staticDir } });
    });
    after(async () => {
      await running?.close();
      rmSync(staticDir, { recursive: true, force: true });
    });

    test('serves index.html for client routes with a strict CSP, and JSON 404 under /dashboard/api', async () => {
      for (const path of ['/dashboard/', '/dashboard/keys', '/dashboard/usage/deep']) {
        const response = await fetch(running.url + path);
        assert.equal(response.status, 200, path);
        assert.match(await response.text(), /gw dashboard test page/);
        assert.match(response.headers.get('content-security-policy') ?? '', /default-src 'self'/);
      }
      const redirect = await fetch(`${running.url}/dashboard`, { redirect: 'manual' });
      assert.equal(redirect.status, 302);
      const missing = await fetch(`${running.url}/dashboard/api/nothing`);
      assert.equal(missing.status, 404);
      assert.equal((await missing.json()).error.code, 'not_found');
    });

    test('serves the built files present at start with their type; hashed assets are cached for good and revalidate by ETag', async () => {
      const script = await fetch(`${running.url}/dashboard/assets/index-abc123.js`);
      assert.equal(script.status, 200);
      assert.equal(await script.text(), 'console.log("dashboard test script");');
      assert.equal(script.headers.get('content-type'), 'text/javascript; charset=utf-8');
      assert.equal(script.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      assert.equal(script.headers.get('x-content-type-options'), 'nosniff');
      const etag = script.headers.get('etag')!;
      assert.match(etag, /^"[\w-]+"$/);
      const again = await fetch(`${running.url}/dashboard/assets/index-abc123.js`, { headers: { 'if-none-match': etag } });
      assert.equal(again.status, 304);
      const icon = await fetch(`${running.url}/dashboard/favicon.svg`);
      assert.equal(icon.headers.get('content-type'), 'image/svg+xml');
      assert.equal(icon.headers.get('cache-control'), 'public, max-age=0');
      const head = await fetch(`${running.url}/dashboard/assets/index-abc123.js`, { method: 'HEAD' });
      assert.equal(head.status, 200);
      const absent = await fetch(`${running.url}/dashboard/assets/index-zzz.js`);
      assert.equal(absent.status, 404);
      assert.equal((await absent.json()).error.code, 'not_found');
    });

    test('sign-in sets an HttpOnly SameSite=Strict cookie (not Secure over plain HTTP)', async () => {
      const response = await fetch(`${running.url}/dashboard/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ credential: running.masterKey }),
      });
      assert.equal(response.status, 200);
      const cookie = response.headers.get('set-cookie') ?? '';
      assert.match(cookie, /HttpOnly/);
      assert.match(cookie, /SameSite=Strict/);
      assert.doesNotMatch(cookie, /Secure/);
      const body = await response.json();
      assert.equal(body.scope, 'master');
      assert.ok(body.csrf_token.length > 20);

    });

    test('wrong credentials and inference keys cannot sign in', async () => {
      assert.equal((await sessionFor(running.url, 'gw-master-not-the-right-one-123456')).status, 401);
      assert.equal((await sessionFor(running.url, running.apiKey)).status, 403);
      assert.equal((await sessionFor(running.url, 'sk-gw-unknown')).status, 401);
    });

    test('state-changing calls need the CSRF token; reads do not', async () => {
      const { cookie, csrf } = await sessionFor(running.url, running.masterKey);
      const create = (headers: Record<string, string>) =>
        fetch(`${running.url}/api/admin/keys`, {
          method: 'POST',
          headers: { cookie, 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ name: 'csrf check', org_id: running.orgId }),
        });
      assert.equal((await create({})).status, 403);
      assert.equal((await create({ 'x-csrf-token': 'forged' })).status, 403);
      assert.equal((await create({ 'x-csrf-token': csrf })).status, 200);
      assert.equal((await fetch(`${running.url}/api/admin/keys`, { headers: { cookie } })).status, 200);
      const tampered = cookie.slice(0, -2) + (cookie.endsWith('AA') ? 'BB' : 'AA');
      assert.equal((await fetch(`${running.url}/api/admin/keys`, { headers: { cookie: tampered } })).status, 401);
    });

    test('an org-admin session ends when its key is revoked, and stays inside its org', async () => {
      const other = await adminRequest(running, 'POST', '/api/admin/orgs', { name: `api-org-${database.name}` });
      const admin = await adminRequest(running, 'POST', '/api/admin/keys', { org_id: other.body.id, name: 'api org admin', role: 'org_admin' });
      const { cookie, csrf } = await sessionFor(running.url, admin.body.key);
      const get = (path: string) => fetch(running.url + path, { headers: { cookie } });
      const keys = await (await get(`/api/admin/keys?org_id=${running.orgId}`)).json();
      assert.deepEqual(keys.data.map((key: { org_id: string }) => key.org_id), [other.body.id]);
      const foreignCreate = await fetch(`${running.url}/api/admin/keys`, {
        method: 'POST',
        headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'sneaky', org_id: running.orgId }),
      });
      // The admin API ignores org_id for an org admin: the key lands in the admin's own org.
      assert.equal(foreignCreate.status, 200);
      assert.equal((await foreignCreate.json()).org_id, other.body.id);
      // The org's bearer-key endpoints see the session's own org.
      const balance = await (await get('/api/credits/balance')).json();
      assert.equal(balance.org_id, other.body.id);
      await adminRequest(running, 'POST', `/api/admin/keys/${admin.body.id}/revoke`);
      assert.equal((await get('/api/admin/keys')).status, 401);
    });

    test('aggregates count a call: summary, spend by key and model, traffic, request log', async () => {
      const key = await adminRequest(running, 'POST', '/api/admin/keys', { org_id: running.orgId, name: `aggregate-${database.name}` });
      const client = new OpenAI({ apiKey: key.body.key, baseURL: running.baseURL, maxRetries: 0 });
      await client.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'count me' }] });
      await assert.rejects(client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }));
      let summary: any;
      for (let attempt = 0; attempt < 100; attempt++) {
        summary = (await adminRequest(running, 'GET', `/api/admin/usage/summary?key_id=${key.body.id}`)).body;
        const spend = (await adminRequest(running, 'GET', `/api/admin/usage/keys?org_id=${running.orgId}`)).body;
        if (summary.requests >= 2 && spend.data.some((row: { key_id: string }) => row.key_id === key.body.id)) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(summary.requests, 2);
      assert.equal(summary.errors, 1);
      assert.ok(summary.total_tokens > 0);
      assert.ok(summary.latency_ms.p50 !== null && summary.latency_ms.p99 >= summary.latency_ms.p50);
      const byKey = (await adminRequest(running, 'GET', `/api/admin/usage/spend?group_by=key&key_id=${key.body.id}`)).body;
      assert.equal(byKey.data.length, 1);
      assert.equal(byKey.data[0].label, `aggregate-${database.name}`);
      assert.ok(Number.isInteger(byKey.data[0].cost_nanos) && byKey.data[0].cost_nanos > 0);
      const byModel = (await adminRequest(running, 'GET', `/api/admin/usage/spend?group_by=model&bucket=hour&key_id=${key.body.id}`)).body;
      assert.equal(byModel.bucket_ms, 3_600_000);
      assert.equal(byModel.data[0].group, 'local-chat');
      const byTeam = (await adminRequest(running, 'GET', `/api/admin/usage/spend?group_by=team&key_id=${key.body.id}`)).body;
      assert.equal(byTeam.data[0].label, 'no team');
      const traffic = (await adminRequest(running, 'GET', `/api/admin/usage/traffic?key_id=${key.body.id}`)).body;
      assert.equal(traffic.data.reduce((sum: number, point: { requests: number }) => sum + point.requests, 0), 2);
      const failed = (await adminRequest(running, 'GET', `/api/admin/request-log?key_id=${key.body.id}&status=error`)).body;
      assert.equal(failed.data.length, 1);
      assert.ok(failed.data[0].status >= 400);
      const page = (await adminRequest(running, 'GET', `/api/admin/request-log?key_id=${key.body.id}&limit=1`)).body;
      assert.equal(page.data.length, 1);
      assert.equal(page.has_more, true);
      assert.ok(!JSON.stringify(page).includes('count me'), 'no message contents');
      assert.equal((await adminRequest(running, 'GET', '/api/admin/usage/summary?from=10&to=5')).status, 400);
    });
  });
}
