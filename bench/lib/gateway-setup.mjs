// What a benchmarked gateway runs with: its catalog file, its environment, and the one-off
// preparation of its database (org limits, credit, a key, a guardrail) through the admin API.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startProcess, stopProcess, waitForListening } from './processes.mjs';

/** Prices as on the provider's price list, so metering computes a real cost for every call. */
export function writeCatalogFile(path, upstreamBaseUrl) {
  const deployment = (upstreamModel, pricing) => [
    '      - provider: openai-compatible',
    `        upstream_model: ${upstreamModel}`,
    `        base_url: ${upstreamBaseUrl}`,
    '        api_key_env: BENCH_UPSTREAM_KEY',
    `        pricing: ${pricing}`,
  ];
  const lines = [
    'models:',
    '  - id: gpt-4o-mini',
    '    owned_by: openai',
    '    deployments:',
    ...deployment('gpt-4o-mini', '{ inputPerMillion: "0.15", cachedInputPerMillion: "0.075", outputPerMillion: "0.60" }'),
    '  - id: text-embedding-3-small',
    '    owned_by: openai',
    '    deployments:',
    ...deployment('text-embedding-3-small', '{ inputPerMillion: "0.02" }'),
  ];
  writeFileSync(path, `${lines.join('\n')}\n`);
}

/**
 * The gateway's environment for one storage mode. Request logging, metering, auth and rate limits
 * are not switches: they are always on. Only the process log is quietened to warnings (the
 * request log goes to the database either way).
 */
export function gatewayEnvironment({ dataDir, databaseUrl, redisUrl, configFile, masterKey, secret, port }) {
  const environment = {
    ...process.env,
    GW_HOST: '127.0.0.1',
    GW_DATA_DIR: dataDir,
    GW_DATABASE_URL: databaseUrl,
    GW_CONFIG: configFile,
    GW_MASTER_KEY: masterKey,
    GW_SECRET: secret,
    GW_LOG_LEVEL: 'warn',
    GW_PRINT_CREDENTIALS: 'false',
    BENCH_UPSTREAM_KEY: 'bench-upstream-key',
  };
  delete environment.GW_REDIS_URL;
  if (redisUrl) environment.GW_REDIS_URL = redisUrl;
  if (port !== undefined) environment.GW_PORT = String(port);
  return environment;
}

async function adminCall(baseUrl, masterKey, method, path, body) {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${masterKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: response.status, body: parsed };
}

async function must(call, what) {
  const result = await call;
  if (result.status < 200 || result.status > 299) throw new Error(`${what} failed: HTTP ${result.status} ${JSON.stringify(result.body).slice(0, 400)}`);
  return result.body;
}

/**
 * Starts the gateway once on its (empty) database, sets the default org's tier and limits high
 * enough not to throttle the load, turns its cache default off (peerbench counts upstream hits;
 * the cache scenario asks for the cache per request), tops up credit, issues a key and, when
 * the guardrail API exists, a PII guardrail that runs only when a request names it. Stops it.
 */
export async function prepareGateway({ root, environment, logFile }) {
  const gateway = startProcess({ command: process.execPath, args: ['dist/src/main.js'], cwd: root, env: { ...environment, GW_PORT: '0' }, logFile });
  try {
    const port = await waitForListening(gateway, { timeoutMs: 60_000 });
    const baseUrl = `http://127.0.0.1:${port}`;
    const master = environment.GW_MASTER_KEY;
    const orgs = await must(adminCall(baseUrl, master, 'GET', '/api/admin/orgs'), 'listing orgs');
    const org = orgs.data.find((each) => each.name === 'default') ?? orgs.data[0];
    if (!org) throw new Error('no organization was created on first start');
    await must(
      adminCall(baseUrl, master, 'PATCH', `/api/admin/orgs/${org.id}`, {
        tier: 'enterprise',
        limits: { rpm: 100_000_000, tpm: 100_000_000_000, tps: 10_000_000 },
        settings: { cache_default: false },
      }),
      'raising the org limits',
    );
    const credit = await adminCall(baseUrl, master, 'POST', `/api/admin/orgs/${org.id}/credits`, { amount_usd: '1000000.00' });
    const notes = [];
    if (credit.status === 404) notes.push('credit top-up route absent: the org runs on its first-start credit');
    else if (credit.status > 299) throw new Error(`credit top-up failed: HTTP ${credit.status} ${JSON.stringify(credit.body)}`);
    const key = await must(adminCall(baseUrl, master, 'POST', '/api/admin/keys', { org_id: org.id, name: 'bench' }), 'issuing a key');
    const guardrail = await adminCall(baseUrl, master, 'POST', '/api/admin/guardrails', {
      org_id: org.id,
      name: 'bench-pii',
      kind: 'pii',
      stage: 'pre',
      action: 'block',
      enabled_by_default: false,
    });
    let guardrailId = null;
    if (guardrail.status >= 200 && guardrail.status <= 299) guardrailId = guardrail.body.id;
    else notes.push(`guardrail API not available (POST /api/admin/guardrails: HTTP ${guardrail.status}): guardrail scenario skipped`);
    return { orgId: org.id, apiKey: key.key, guardrailId, notes };
  } finally {
    await stopProcess(gateway);
  }
}

export function resultPaths(resultsDir) {
  return {
    catalog: join(resultsDir, 'gw-config.yaml'),
    state: join(resultsDir, 'state.json'),
    peerbenchJson: join(resultsDir, 'peerbench.json'),
    peerbenchRunDir: join(resultsDir, 'peerbench'),
    scenariosJson: join(resultsDir, 'scenarios.json'),
  };
}
