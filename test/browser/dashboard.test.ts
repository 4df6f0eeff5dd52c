import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createTestCertificates, type TestCertificates } from '../e2e/alerts-fixtures/test-certificates.js';
import { startHttpsReceiver, type HttpsReceiver } from '../e2e/alerts-fixtures/https-receiver.js';
import { adminRequest, startGateway, type RunningGateway } from '../helpers/start-gateway.js';
import { buildDashboard, chromiumMissing, launchChromium, SCREENSHOT_DIRECTORY, sessionFor } from './dashboard-fixture.js';

const PAGES = ['keys', 'usage', 'credits', 'requests', 'models', 'guardrails', 'prompts', 'experiments', 'channels', 'providers'];

describe('dashboard in a browser', { skip: chromiumMissing }, () => {
  let running: RunningGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let dashboardDir: string;
  let certificates: TestCertificates;
  let receiver: HttpsReceiver;
  let createdKey = '';

  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOT_DIRECTORY, `${name}.png`), fullPage: true });
  const open = async (slug: string) => {
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link').nth(PAGES.indexOf(slug)).click();
    await page.waitForURL(`**/dashboard/${slug}`);
  };

  before(async () => {
    certificates = createTestCertificates();
    receiver = await startHttpsReceiver(certificates);
    dashboardDir = await buildDashboard();
    running = await startGateway({ config: { dashboardDir, webhookAllowedHosts: ['127.0.0.1'], webhookCaFile: certificates.caFile } });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: running.url });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
  });

  after(async () => {
    await browser?.close();
    await running?.close();
    await receiver?.close();
    certificates?.remove();
    if (dashboardDir) rmSync(dashboardDir, { recursive: true, force: true });
  });

  test('signs in with the master credential', async () => {
    await page.goto(`${running.url}/dashboard/`);
    await shot('sign-in');
    await page.getByLabel('Master credential or org-admin key').fill('gw-master-wrong-credential-000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'not accepted' }).waitFor();
    await page.getByLabel('Master credential or org-admin key').fill(running.masterKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();
    const cookies = await context.cookies();
    const session = cookies.find((cookie) => cookie.name === 'gw_session');
    assert.ok(session, 'session cookie set');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Strict');
    assert.equal(await page.evaluate(() => document.cookie.includes('gw_session')), false, 'not readable by scripts');
  });

  test('creates a key, copies it and uses it through the openai SDK', async () => {
    await page.getByLabel('Name', { exact: true }).fill('browser key');
    await page.getByLabel('Budget (USD)').fill('5');
    await page.getByLabel('Requests per minute').fill('100');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('you will not see this again').waitFor();
    await shot('keys-created');
    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByText('Copied.').waitFor();
    createdKey = await page.evaluate(() => navigator.clipboard.readText());
    assert.match(createdKey, /^sk-gw-/);
    assert.equal(createdKey, await page.getByLabel('New key', { exact: true }).inputValue());

    const client = new OpenAI({ apiKey: createdKey, baseURL: running.baseURL, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'hello from the dashboard test' }] });
    assert.equal(completion.object, 'chat.completion');

    await page.getByRole('button', { name: 'Done' }).click();
    const row = page.locator('tr', { hasText: 'browser key' });
    await row.getByText(`...${createdKey.slice(-4)}`).waitFor();
    // Spend reaches the ledger in batches, and a master session's page is drawn for all orgs, then
    // again for the first org: read the row until it shows a spend, and judge that reading.
    let budget = '';
    for (let attempt = 0; attempt < 50; attempt++) {
      await page.reload();
      budget = await page.locator('tr', { hasText: 'browser key' }).locator('.budget').innerText();
      if (/^\$0\.\d{6} of/.test(budget) && !budget.startsWith('$0.000000 of')) break;
      await page.waitForTimeout(100);
    }
    assert.match(budget, /^\$0\.\d{6} of \$5\.000000/);
    assert.ok(!budget.startsWith('$0.000000 of'), `spend shown for the key: ${budget}`);
    await shot('keys');
  });

  test('usage and the request log show the call', async () => {
    await open('usage');
    const summary = page.getByTestId('usage-summary');
    for (let attempt = 0; attempt < 50; attempt++) {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await summary.waitFor();
      if (!(await summary.innerText()).match(/Requests\s+0\b/)) break;
      await page.waitForTimeout(100);
    }
    assert.doesNotMatch(await summary.innerText(), /Requests\s+0\b/);
    await page.getByRole('img', { name: 'Spend over time' }).waitFor();
    await page.getByLabel('Per').selectOption('key');
    await page.locator('.legend', { hasText: 'browser key' }).waitFor();
    await shot('usage');

    await open('requests');
    await page.getByLabel('Key').selectOption({ label: `browser key (sk-...${createdKey.slice(-4)})` });
    const logRow = page.locator('table.log tbody tr', { hasText: 'local-chat' }).first();
    await logRow.waitFor();
    await logRow.getByRole('button', { name: 'Details' }).click();
    await page.getByText('Message contents are not shown').waitFor();
    assert.ok(!(await page.locator('main').innerText()).includes('hello from the dashboard test'), 'no message contents');
    await shot('requests');
  });

  test('revokes the key with a confirmation step; the next SDK call is rejected', async () => {
    await open('keys');
    const row = page.locator('tr', { hasText: 'browser key' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).waitFor();
    await shot('keys-revoke-confirm');
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    await row.locator('.tag', { hasText: 'revoked' }).waitFor();
    const client = new OpenAI({ apiKey: createdKey, baseURL: running.baseURL, maxRetries: 0 });
    await assert.rejects(
      client.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'after revoke' }] }),
      (error: unknown) => error instanceof OpenAI.APIError && error.status === 401,
    );
  });

  test('creates a channel and sends a test notification', async (t) => {
    await open('channels');
    await page.locator('main h1').waitFor();
    if (await page.getByText('Alert channels is not available').isVisible()) {
      t.skip('channel routes are not registered on this gateway');
      await shot('channels');
      return;
    }
    await page.getByLabel('Name', { exact: true }).fill('ops webhook');
    await page.getByLabel('HTTPS URL').fill(receiver.url('/hook'));
    await page.getByRole('button', { name: 'Create channel' }).click();
    const item = page.locator('li.channel', { hasText: 'ops webhook' });
    await item.waitFor();
    await item.getByRole('button', { name: 'Send test' }).click();
    await item.getByTestId('channel-test-result').filter({ hasText: 'Delivered' }).waitFor();
    assert.equal(receiver.requests.length, 1);
    await item.getByRole('button', { name: 'Delivery log' }).click();
    await item.locator('table', { hasText: 'delivered' }).waitFor();
    await shot('channels');
  });

  test('guardrails toggle; prompts show versions side by side and render', async () => {
    const guardrail = await adminRequest(running, 'POST', '/api/admin/guardrails', { org_id: running.orgId, name: 'no pii', kind: 'pii', enabled_by_default: true });
    assert.equal(guardrail.status, 200);
    await open('guardrails');
    const row = page.locator('tr', { hasText: 'no pii' });
    await row.getByRole('button', { name: 'Disable no pii' }).click();
    await row.getByText('disabled').waitFor();
    const after = await adminRequest(running, 'GET', `/api/admin/guardrails?org_id=${running.orgId}`);
    assert.equal(after.body.data.find((item: { name: string }) => item.name === 'no pii').enabled_by_default, false);

    const prompt = await adminRequest(running, 'POST', '/api/admin/prompts', {
      org_id: running.orgId,
      name: 'greeter',
      messages: [{ role: 'system', content: 'You greet people.' }, { role: 'user', content: 'Say hi to {{ name }}.' }],
    });
    assert.equal(prompt.status, 200);
    const second = await adminRequest(running, 'POST', `/api/admin/prompts/${prompt.body.id}/versions`, {
      org_id: running.orgId,
      messages: [{ role: 'system', content: 'You greet people warmly.' }, { role: 'user', content: 'Say hi to {{ name }}.' }],
    });
    assert.equal(second.status, 200);
    await open('prompts');
    await page.getByRole('button', { name: /greeter/ }).click();
    const diff = page.locator('table.diff');
    await diff.locator('tr.changed', { hasText: 'warmly' }).waitFor();
    await page.getByLabel('Variables (JSON)').fill('{"name": "Ada"}');
    await page.getByRole('button', { name: 'Render' }).click();
    await page.locator('pre.rendered', { hasText: 'Say hi to Ada.' }).waitFor();
    await shot('prompts');
  });

  test('every page renders (screenshots at 1280 px and narrow)', async () => {
    for (const slug of PAGES) {
      await open(slug);
      await page.locator('main h1').waitFor();
      await page.waitForFunction(() => !document.querySelector('main [role="status"]')?.textContent?.startsWith('Loading'));
      assert.equal(await page.locator('main .status.error').count(), 0, `${slug}: no error shown`);
      await shot(`page-${slug}`);
    }
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: 'Menu' }).click();
    await shot('narrow-menu');
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    if (overflow > 1) {
      const wide = await page.evaluate(() =>
        Array.from(document.querySelectorAll('body *'))
          .filter((element) => element.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
          .slice(0, 8)
          .map((element) => `${element.tagName}.${element.className} ${Math.round(element.getBoundingClientRect().right)}`),
      );
      console.log('wider than the viewport:', wide);
    }
    assert.ok(overflow <= 1, `no horizontal page scroll at 390 px (overflow ${overflow})`);
    await shot('narrow-keys');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  test('an org admin signs in and cannot read another org\'s keys', async () => {
    const other = await adminRequest(running, 'POST', '/api/admin/orgs', { name: 'other org' });
    assert.equal(other.status, 200);
    const adminKey = await adminRequest(running, 'POST', '/api/admin/keys', { org_id: other.body.id, name: 'other admin', role: 'org_admin' });
    assert.equal(adminKey.status, 200);
    const firstOrgKeys = await adminRequest(running, 'GET', `/api/admin/keys?org_id=${running.orgId}`);
    const foreignKeyId: string = firstOrgKeys.body.data[0].id;

    const { cookie, csrf, status } = await sessionFor(running.url, adminKey.body.key);
    assert.equal(status, 200);
    const call = (method: string, path: string, body?: unknown) =>
      fetch(running.url + path, {
        method,
        headers: { cookie, 'x-csrf-token': csrf, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const own = await (await call('GET', `/api/admin/keys?org_id=${running.orgId}`)).json();
    assert.ok(own.data.length > 0);
    assert.ok(own.data.every((key: { org_id: string }) => key.org_id === other.body.id), 'only its own org\'s keys');
    assert.equal((await call('GET', `/api/admin/keys/${foreignKeyId}`)).status, 404);
    assert.equal((await call('POST', `/api/admin/keys/${foreignKeyId}/revoke`)).status, 404);
    const log = await (await call('GET', `/api/admin/request-log?org_id=${running.orgId}`)).json();
    assert.equal(log.data.length, 0, 'no requests of the other org');
    const spend = await (await call('GET', `/api/admin/usage/keys?org_id=${running.orgId}`)).json();
    assert.equal(spend.data.length, 0, 'no spend of the other org');

    // The same in the browser: the org admin's dashboard lists only its org's keys.
    const orgContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const orgPage = await orgContext.newPage();
    await orgPage.goto(`${running.url}/dashboard/keys`);
    await orgPage.getByLabel('Master credential or org-admin key').fill(adminKey.body.key);
    await orgPage.getByRole('button', { name: 'Sign in' }).click();
    await orgPage.locator('tr', { hasText: 'other admin' }).waitFor();
    assert.equal(await orgPage.locator('tr', { hasText: 'browser key' }).count(), 0);
    await orgPage.screenshot({ path: join(SCREENSHOT_DIRECTORY, 'org-admin-keys.png'), fullPage: true });
    await orgContext.close();
  });

  test('signs out', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    const response = await page.evaluate(async () => (await fetch('/api/admin/keys')).status);
    assert.equal(response, 401);
  });
});
