import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnGateway, type GatewayProcess } from './spawn-gateway.js';
import { tempDirectory } from './test-databases.js';

/** Shared by every process of a cluster: one server secret, one admin credential, one first key. */
export const CLUSTER_SECRET = 'cluster-secret-0123456789-abcdefghij';
export const CLUSTER_MASTER_KEY = 'gw-master-cluster-0123456789abcdef';
export const CLUSTER_FIRST_KEY = 'sk-gw-' + 'C'.repeat(40);

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

/** fetch, with the cause of a network failure in the message (which undici keeps in `cause`). */
async function send(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    throw new Error(`${init.method ?? 'GET'} ${url}: ${(error as Error).message}${cause ? ` (${String(cause)})` : ''}`, { cause: error });
  }
}

async function reply(response: Response): Promise<Reply> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON (an SSE body): keep the text.
  }
  return { status: response.status, headers: response.headers, body };
}

export async function adminCall(baseUrl: string, method: string, path: string, body?: unknown): Promise<Reply> {
  const response = await send(baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${CLUSTER_MASTER_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return reply(response);
}

export async function keyCall(baseUrl: string, key: string, method: string, path: string, body?: unknown): Promise<Reply> {
  const response = await send(baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return reply(response);
}

/** A fresh org (enterprise tier, so tier limits stay out of the way) with credit and one key. */
export async function createTenant(
  baseUrl: string,
  options: { credit?: string; key?: Record<string, unknown> } = {},
): Promise<{ orgId: string; keyId: string; key: string }> {
  const org = await adminCall(baseUrl, 'POST', '/api/admin/orgs', { name: `cluster ${Math.random()}`, tier: 'enterprise' });
  if (org.status !== 200) throw new Error(`org: ${org.status} ${JSON.stringify(org.body)}`);
  if (options.credit) {
    const topUp = await adminCall(baseUrl, 'POST', `/api/admin/orgs/${org.body.id}/credits`, { amount_usd: options.credit });
    if (topUp.status !== 200) throw new Error(`top-up: ${topUp.status} ${JSON.stringify(topUp.body)}`);
  }
  const key = await adminCall(baseUrl, 'POST', '/api/admin/keys', { org_id: org.body.id, name: 'cluster key', ...options.key });
  if (key.status !== 200) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`);
  return { orgId: org.body.id, keyId: key.body.id, key: key.body.key };
}

/** Output-only price for local-chat in one org: 1000 nano-USD per output token, so max_tokens 5 costs exactly 5000. */
export async function setExactPrice(baseUrl: string, orgId: string): Promise<void> {
  const set = await adminCall(baseUrl, 'PUT', `/api/admin/orgs/${orgId}/pricing/local-chat`, { inputPerMillion: '0', outputPerMillion: '1.00' });
  if (set.status !== 200) throw new Error(`pricing: ${set.status} ${JSON.stringify(set.body)}`);
}

/** Sum of cost_nanos over every page of GET /api/credits/history for the key's org. */
export async function recordedSpend(baseUrl: string, key: string): Promise<{ count: number; nanos: number }> {
  let count = 0;
  let nanos = 0;
  for (let offset = 0; ; offset += 100) {
    const page = await keyCall(baseUrl, key, 'GET', `/api/credits/history?limit=100&offset=${offset}`);
    if (page.status !== 200) throw new Error(`history: ${page.status} ${JSON.stringify(page.body)}`);
    for (const entry of page.body.data) {
      count++;
      nanos += entry.cost_nanos;
    }
    if (!page.body.has_more) return { count, nanos };
  }
}

/** "0.000005" → 5000 (exact, no floats). */
export function usdToNanos(usd: string): number {
  const [whole, fraction = ''] = usd.split('.');
  return Number(whole) * 1e9 + Number(fraction.padEnd(9, '0'));
}

/** Writes a GW_CONFIG file with one model `fake-chat` served by an OpenAI-compatible fake upstream. */
export function writeFakeUpstreamConfig(upstreamBaseUrl: string): string {
  const file = join(tempDirectory(), 'gw.yaml');
  writeFileSync(
    file,
    `models:\n  - id: fake-chat\n    owned_by: test\n    deployments:\n      - provider: openai-compatible\n        upstream_model: fake\n        base_url: ${upstreamBaseUrl}\n        pricing: { inputPerMillion: "1", outputPerMillion: "2" }\n`,
  );
  return file;
}

/** Starts one gw process of a cluster; every process gets the same secrets. */
export function spawnClusterMember(environment: Record<string, string>): Promise<GatewayProcess> {
  return spawnGateway({
    GW_DATA_DIR: tempDirectory(),
    GW_SECRET: CLUSTER_SECRET,
    GW_MASTER_KEY: CLUSTER_MASTER_KEY,
    GW_BOOTSTRAP_API_KEY: CLUSTER_FIRST_KEY,
    GW_BOOTSTRAP_TIER: 'enterprise',
    GW_PRINT_CREDENTIALS: 'false',
    GW_LOG_FLUSH_INTERVAL_MS: '100',
    GW_SHUTDOWN_GRACE_MS: '2000',
    ...environment,
  });
}

export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
