import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket, connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { adminRequest, startGateway, type RunningGateway } from '../helpers/start-gateway.js';
import { REDIS_SKIP, TEST_DATABASES, TEST_REDIS_URL } from '../helpers/test-databases.js';

const postgres = TEST_DATABASES.find((database) => database.name === 'postgres')!;

interface Tenant {
  orgId: string;
  key: string;
}

async function createTenant(running: RunningGateway, options: { credit?: string; key?: Record<string, unknown>; org?: Record<string, unknown> } = {}): Promise<Tenant> {
  const org = await adminRequest(running, 'POST', '/api/admin/orgs', { name: `metering ${Math.random()}`, ...options.org });
  assert.equal(org.status, 200, JSON.stringify(org.body));
  if (options.credit) {
    const topUp = await adminRequest(running, 'POST', `/api/admin/orgs/${org.body.id}/credits`, { amount_usd: options.credit, note: 'test' });
    assert.equal(topUp.status, 200, JSON.stringify(topUp.body));
  }
  const key = await adminRequest(running, 'POST', '/api/admin/keys', { org_id: org.body.id, name: 'metering key', ...options.key });
  assert.equal(key.status, 200, JSON.stringify(key.body));
  return { orgId: org.body.id, key: key.body.key };
}

async function chat(running: RunningGateway, key: string, body: Record<string, unknown> = {}) {
  const response = await fetch(`${running.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: `Tell me a long story about metering ${randomUUID()}` }], max_tokens: 5, ...body }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

async function get(running: RunningGateway, key: string, path: string) {
  const response = await fetch(running.url + path, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: (await response.json()) as any };
}

const nanos = (usd: string) => {
  const [whole, fraction] = usd.split('.');
  return Number(whole) * 1e9 + Number(fraction.padEnd(9, '0'));
};

/** Output-only price: 1000 nano-USD per output token, so a call with max_tokens 5 costs exactly its reservation. */
async function exactPrice(running: RunningGateway, orgId: string): Promise<void> {
  const set = await adminRequest(running, 'PUT', `/api/admin/orgs/${orgId}/pricing/local-chat`, { inputPerMillion: '0', outputPerMillion: '1.00' });
  assert.equal(set.status, 200, JSON.stringify(set.body));
}

function backendSuite(name: string, skip: string | false, start: () => Promise<RunningGateway>) {
  describe(`metering e2e (${name})`, { skip }, () => {
    let running: RunningGateway;
    before(async () => {
      running = await start();
    });
    after(async () => {
      await running?.close();
    });

    test('x-gw-request-cost matches the balance change and the history entry', async () => {
      const tenant = await createTenant(running, { credit: '1.00' });
      const first = await chat(running, tenant.key);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const cost = first.headers.get('x-gw-request-cost')!;
      assert.match(cost, /^\d+\.\d{9}$/);
      assert.ok(nanos(cost) > 0);
      assert.ok(first.headers.get('x-ratelimit-remaining-requests'));
      const balance = await get(running, tenant.key, '/api/credits/balance');
      assert.equal(balance.status, 200);
      assert.equal(balance.body.org_id, tenant.orgId);
      assert.equal(balance.body.spent_usd, cost);
      assert.equal(balance.body.credited_usd, '1.000000000');
      if (running.gateway.services.redis) {
        // With Redis the instance keeps credit claimed for the key's next calls (at most 1/32 of what is left; docs/money.md, "Allowances").
        assert.ok(nanos(balance.body.reserved_usd) <= (1e9 - nanos(cost)) / 32, balance.body.reserved_usd);
      } else assert.equal(balance.body.reserved_usd, '0.000000000');
      assert.equal(balance.body.balance_nanos, 1e9 - nanos(cost) - nanos(balance.body.reserved_usd));
      const history = await get(running, tenant.key, '/api/credits/history?limit=10');
      assert.equal(history.status, 200);
      assert.equal(history.body.data.length, 1);
      const [entry] = history.body.data;
      assert.equal(entry.cost_usd, cost);
      assert.equal(entry.model, 'local-chat');
      assert.equal(entry.request_id, first.headers.get('x-gw-request-id'));
      assert.match(entry.key_alias, /^sk-\.\.\./);
      assert.equal(entry.units.outputTokens, 5);
    });

    test('history is newest first, paged, and validates limit', async () => {
      const tenant = await createTenant(running, { credit: '1.00' });
      const ids: string[] = [];
      for (let index = 0; index < 3; index++) ids.push((await chat(running, tenant.key)).headers.get('x-gw-request-id')!);
      const page = await get(running, tenant.key, '/api/credits/history?limit=2&offset=0');
      assert.deepEqual(
        page.body.data.map((entry: { request_id: string }) => entry.request_id),
        [ids[2], ids[1]],
      );
      assert.equal(page.body.has_more, true);
      const rest = await get(running, tenant.key, '/api/credits/history?limit=2&offset=2');
      assert.deepEqual(rest.body.data.map((entry: { request_id: string }) => entry.request_id), [ids[0]]);
      for (const bad of ['limit=0', 'limit=501', 'limit=abc', 'offset=-1']) {
        const refused = await get(running, tenant.key, `/api/credits/history?${bad}`);
        assert.equal(refused.status, 400, bad);
        assert.equal(refused.body.error.code, 'invalid_request');
      }
    });

    test('402 insufficient_credits with nothing debited', async () => {
      const tenant = await createTenant(running, { credit: '0.000001' });
      const refused = await chat(running, tenant.key);
      assert.equal(refused.status, 402);
      assert.equal(refused.body.error.code, 'insufficient_credits');
      assert.equal(refused.body.error.type, 'insufficient_credits');
      const balance = await get(running, tenant.key, '/api/credits/balance');
      assert.equal(balance.body.spent_usd, '0.000000000');
      assert.equal(balance.body.reserved_usd, '0.000000000');
      assert.equal((await get(running, tenant.key, '/api/credits/history')).body.data.length, 0);
    });

    test('stream: cost in the final usage chunk and in the trailer', async () => {
      const tenant = await createTenant(running, { credit: '1.00' });
      const response = await fetch(`${running.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'stream please' }], stream: true, stream_options: { include_usage: true } }),
      });
      assert.equal(response.status, 200);
      const text = await response.text();
      const chunks = text
        .split('\n\n')
        .filter((line) => line.startsWith('data: {'))
        .map((line) => JSON.parse(line.slice(6)));
      const usageChunk = chunks.find((chunk) => chunk.usage);
      assert.ok(usageChunk, 'usage chunk present');
      assert.match(usageChunk.gw_cost_usd, /^\d+\.\d{9}$/);
      const balance = await get(running, tenant.key, '/api/credits/balance');
      assert.equal(balance.body.spent_usd, usageChunk.gw_cost_usd);
    });

    test('429 rate_limit_exceeded on RPM, with Retry-After and x-ratelimit headers', async () => {
      const tenant = await createTenant(running, { credit: '1.00', key: { limits: { rpm: 2 } } });
      assert.equal((await chat(running, tenant.key)).status, 200);
      const second = await chat(running, tenant.key);
      assert.equal(second.status, 200);
      assert.equal(second.headers.get('x-ratelimit-limit-requests'), '2');
      assert.equal(second.headers.get('x-ratelimit-remaining-requests'), '0');
      assert.match(second.headers.get('x-ratelimit-reset-requests')!, /^\d+(\.\d+)?(ms|s)$|^\d+m\d+(\.\d+)?s$/);
      const third = await chat(running, tenant.key);
      assert.equal(third.status, 429);
      assert.equal(third.body.error.code, 'rate_limit_exceeded');
      assert.ok(Number(third.headers.get('retry-after')) >= 1);
      assert.equal(third.headers.get('x-ratelimit-limit-requests'), '2');
      assert.ok(third.headers.get('x-ratelimit-limit-tokens'));
      assert.ok(third.headers.get('x-ratelimit-remaining-tokens'));
      assert.ok(third.headers.get('x-ratelimit-reset-tokens'));
    });

    test('429 rate_limit_exceeded on TPS (requests per second)', async () => {
      const tenant = await createTenant(running, { credit: '1.00', key: { limits: { rpm: 1000, tps: 1 } } });
      const results = await Promise.all(Array.from({ length: 5 }, () => chat(running, tenant.key)));
      const refused = results.filter((result) => result.status === 429);
      assert.ok(refused.length >= 1);
      assert.ok(refused.every((result) => result.body.error.code === 'rate_limit_exceeded' && Number(result.headers.get('retry-after')) >= 1));
    });

    test('429 tpm_limit_exceeded on TPM', async () => {
      const tenant = await createTenant(running, { credit: '1.00', key: { limits: { tpm: 40 } } });
      // Each call fits the limit alone (one counting more than the whole limit is a 400: docs/rate-limits.md); the second does not fit after the first.
      const short = { messages: [{ role: 'user', content: 'hi' }], max_tokens: 25 };
      const first = await chat(running, tenant.key, short);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const refused = await chat(running, tenant.key, { ...short, max_tokens: 30 });
      assert.equal(refused.status, 429, JSON.stringify(refused.body));
      assert.equal(refused.body.error.code, 'tpm_limit_exceeded');
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      assert.equal(refused.headers.get('x-ratelimit-limit-tokens'), '40');
    });

    test('50 parallel calls against a budget for exactly 7: exactly 7 succeed, spend = sum of costs', async () => {
      const tenant = await createTenant(running, { credit: '1.00', key: { budget: { limit_usd: '0.000035', period: 'monthly' }, limits: { rpm: 1000, tps: 1000 } } });
      await exactPrice(running, tenant.orgId);
      const results = await Promise.all(Array.from({ length: 50 }, () => chat(running, tenant.key)));
      const admitted = results.filter((result) => result.status === 200);
      assert.equal(admitted.length, 7, JSON.stringify(results.map((result) => result.status)));
      assert.ok(results.filter((result) => result.status !== 200).every((result) => result.status === 402 && result.body.error.code === 'insufficient_credits'));
      const total = admitted.reduce((sum, result) => sum + nanos(result.headers.get('x-gw-request-cost')!), 0);
      assert.equal(total, 35_000);
      const balance = await get(running, tenant.key, '/api/credits/balance');
      assert.equal(nanos(balance.body.spent_usd), total);
      assert.equal(balance.body.reserved_usd, '0.000000000');
      const history = await get(running, tenant.key, '/api/credits/history?limit=100');
      assert.equal(history.body.data.length, 7);
      assert.equal(history.body.data.reduce((sum: number, entry: { cost_nanos: number }) => sum + entry.cost_nanos, 0), total);
      // The key is at its budget: blocked.
      assert.equal((await chat(running, tenant.key)).status, 402);
    });

    test('a per-user budget removed and set again counts the spend the user made meanwhile', async () => {
      const tenant = await createTenant(running, { credit: '1.00' });
      await exactPrice(running, tenant.orgId);
      const userBudget = { limit_usd: '0.000015', period: 'monthly' };
      const created = await adminRequest(running, 'POST', '/api/admin/keys', { org_id: tenant.orgId, name: 'per-user', user_budget: userBudget, limits: { rpm: 1000, tps: 1000 } });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const asAlice = () => chat(running, created.body.key, { user: 'alice' });
      assert.equal((await asAlice()).status, 200);
      const setUserBudget = async (budget: unknown) => {
        const patched = await adminRequest(running, 'PATCH', `/api/admin/keys/${created.body.id}`, { user_budget: budget });
        assert.equal(patched.status, 200, JSON.stringify(patched.body));
      };
      await setUserBudget(null);
      for (let call = 0; call < 2; call++) assert.equal((await asAlice()).status, 200, 'no per-user budget: not limited');
      await setUserBudget(userBudget);
      // Alice has spent 15 µUSD this month, all of the budget set again.
      const refused = await asAlice();
      assert.equal(refused.status, 402, JSON.stringify(refused.body));
      assert.equal((await chat(running, created.body.key, { user: 'bob' })).status, 200, 'another user has their own counter');
    });

    test('50 parallel calls against an RPM of 9: exactly 9 succeed and are billed', async () => {
      const tenant = await createTenant(running, { credit: '1.00', key: { limits: { rpm: 9, tps: 1000 } } });
      await exactPrice(running, tenant.orgId);
      const results = await Promise.all(Array.from({ length: 50 }, () => chat(running, tenant.key)));
      const admitted = results.filter((result) => result.status === 200);
      assert.equal(admitted.length, 9);
      assert.ok(results.filter((result) => result.status !== 200).every((result) => result.status === 429 && result.body.error.code === 'rate_limit_exceeded'));
      const total = admitted.reduce((sum, result) => sum + nanos(result.headers.get('x-gw-request-cost')!), 0);
      const balance = await get(running, tenant.key, '/api/credits/balance');
      assert.equal(nanos(balance.body.spent_usd), total);
      assert.equal(total, 9 * 5_000);
    });

    test('pricing endpoint lists the org effective prices', async () => {
      const tenant = await createTenant(running, { credit: '1.00' });
      await exactPrice(running, tenant.orgId);
      const list = await get(running, tenant.key, '/api/models/pricing');
      assert.equal(list.status, 200);
      const localChat = list.body.data.find((entry: { model: string }) => entry.model === 'local-chat');
      assert.equal(localChat.pricing.outputPerMillion, '1.00');
      assert.equal(localChat.pricing.inputPerMillion, '0');
      // Another org still sees the shipped price.
      const other = await get(running, running.apiKey, '/api/models/pricing');
      assert.equal(other.body.data.find((entry: { model: string }) => entry.model === 'local-chat').pricing.outputPerMillion, '0.40');
      // Only the master sets prices.
      const orgAdmin = await adminRequest(running, 'POST', '/api/admin/keys', { org_id: tenant.orgId, name: 'admin', role: 'org_admin' });
      const refused = await fetch(`${running.url}/api/admin/orgs/${tenant.orgId}/pricing/local-chat`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${orgAdmin.body.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ outputPerMillion: '0' }),
      });
      assert.equal(refused.status, 403);
    });
  });
}

backendSuite('embedded SQLite, in-process counters', false, () => startGateway());
backendSuite(
  'Postgres + Redis',
  postgres.skip || REDIS_SKIP,
  () => startGateway({ database: 'postgres', config: { redisUrl: TEST_REDIS_URL } }),
);

/** A TCP relay to Redis that can be cut, to make the credit store unreachable mid-run. */
async function startRelay(target: URL): Promise<{ url: string; cut(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let open = true;
  const server: Server = createServer((client) => {
    if (!open) return client.destroy();
    const upstream = connect(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    cut() {
      open = false;
      for (const socket of sockets) socket.destroy();
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('metering e2e: credit store down', { skip: REDIS_SKIP }, () => {
  test('503 credit_check_failed when Redis cannot be reached; the call does not run', async () => {
    const relay = await startRelay(new URL(TEST_REDIS_URL!));
    const running = await startGateway({ config: { redisUrl: relay.url } });
    try {
      const ok = await chat(running, running.apiKey);
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      relay.cut();
      // The first call may still arrive before the gateway has seen its Redis connection close; such
      // a call is admitted from credit this instance already holds in Redis (an allowance). Once the
      // close is seen, the allowances are dropped and every call is refused.
      let refused = await chat(running, running.apiKey);
      for (let attempt = 0; attempt < 20 && refused.status === 200; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        refused = await chat(running, running.apiKey);
      }
      assert.equal(refused.status, 503, JSON.stringify(refused.body));
      assert.equal(refused.body.error.code, 'credit_check_failed');
      const again = await chat(running, running.apiKey);
      assert.equal(again.status, 503, 'every later call is refused while Redis is away');
    } finally {
      await running.close();
      await relay.close();
    }
  });
});

describe('metering e2e: allowances turned off', { skip: postgres.skip || REDIS_SKIP }, () => {
  test('with GW_ALLOWANCE_SHARE=0 nothing is reserved once a call is done: every hold was its own', async () => {
    const running = await startGateway({ database: 'postgres', config: { redisUrl: TEST_REDIS_URL, allowanceShare: 0 } });
    try {
      const tenant = await createTenant(running, { credit: '1.00' });
      const reply = await chat(running, tenant.key);
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      const balance = await get(running, tenant.key, '/api/credits/balance');
      assert.equal(balance.body.reserved_usd, '0.000000000');
      assert.equal(balance.body.balance_nanos, 1e9 - nanos(reply.headers.get('x-gw-request-cost')!));
    } finally {
      await running.close();
    }
  });
});
