import { existsSync, mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';
export const chromiumMissing = existsSync(CHROMIUM_PATH) ? false : `browser tests skipped: ${CHROMIUM_PATH} is not installed (apt-get install -y chromium)`;

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
export const SCREENSHOT_DIRECTORY = join(repositoryRoot, 'test-artifacts', 'screenshots');

/** Builds the dashboard from source into a fresh directory, so a test never runs against a stale build. */
export async function buildDashboard(): Promise<string> {
  const { build } = await import('vite');
  const outDir = mkdtempSync(join(tmpdir(), 'gw-dashboard-'));
  await build({ configFile: join(repositoryRoot, 'dashboard', 'vite.config.ts'), logLevel: 'error', build: { outDir, emptyOutDir: true } });
  return outDir;
}

export async function launchChromium(): Promise<Browser> {
  mkdirSync(SCREENSHOT_DIRECTORY, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-quic', '--disable-sync'],
  });
}

/** Signs in through the session endpoint (as the page does) and returns what a browser would hold. */
export async function sessionFor(url: string, credential: string): Promise<{ cookie: string; csrf: string; status: number }> {
  const response = await fetch(`${url}/dashboard/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ credential }),
  });
  const body = (await response.json()) as { csrf_token?: string };
  return { cookie: (response.headers.get('set-cookie') ?? '').split(';')[0], csrf: body.csrf_token ?? '', status: response.status };
}
