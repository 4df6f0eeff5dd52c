import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fakes/fake-openai-upstream.js';
import {
  createTenant,
  adminCall,
  keyCall,
  recordedSpend,
  setExactPrice,
  spawnClusterMember,
  usdToNanos,
  waitFor,
  writeFakeUpstreamConfig,
  type Reply,
} from '../helpers/gateway-cluster.js';
import type { GatewayProcess } from '../helpers/spawn-gateway.js';
import { startTcpRelay, type TcpRelay } from '../helpers/tcp-relay.js';
import { TEST_DATABASES, TEST_REDIS_URL } from '../helpers/test-databases.js';

/*
 * Redis or Postgres going away mid-traffic, simulated with a TCP relay between the gateway and the
 * machine's shared server (which keeps running for every other test). The stores use fixed `gw:`
 * key names, so this file owns Redis logical databases 10 and 11 (flushed first).
 */
const postgres = TEST_DATABASES.find((database) => database.name === 'postgres')!;
const skip = postgres.skip || (TEST_REDIS_URL ? false : 'GW_TEST_REDIS_URL is not set (fault-tolerance tests skipped)');

async function freshRedisDb(db: number): Promise<string> {
  const url = new URL(TEST_REDIS_URL!);
  url.pathname = `/${db}`;
  const redis = new Redis(url.toString(), { maxRetriesPerRequest: 1 });
  await redis.flushdb();
  redis.disconnect();
  return url.toString();
}

/** Metered chat on the local provider: max_tokens 5 at the exact test price costs 5000 nano-USD. */
function chat(url: string, key: string, extra: Record<string, unknown> = {}, prefix = ''): Promise<Reply> {
  return keyCall(url, key, 'POST', '/v1/chat/completions', {
    model: 'local-chat',
    messages: [{ role: 'user', content: `${prefix}Say something ${randomUUID()}` }],
    max_tokens: 5,
    gw_cache: false,
    ...extra,
  });
}

/** Keeps the cost header of every successful call: the spend the ledger must end up with. */
function costBook() {
  const costs: number[] = [];
  return {
    costs,
    take(reply: Reply): Reply {
      if (reply.status === 200) costs.push(usdToNanos(reply.headers.get('x-gw-request-cost') ?? 'missing'));
      return reply;
    },
    total: () => costs.reduce((sum, cost) => sum + cost, 0),
  };
}

describe('Redis goes away mid-traffic and comes back', { skip }, () => {
  let relay: TcpRelay;
  let upstream: FakeOpenAIUpstream;
  let gateway: GatewayProcess;

  before(async () => {
    relay = await startTcpRelay(await freshRedisDb(10), 6379);
    upstream = await startFakeOpenAIUpstream();
    gateway = await spawnClusterMember({
      GW_DATABASE_URL: await postgres.create(),
      GW_REDIS_URL: relay.url,
      GW_CONFIG: writeFakeUpstreamConfig(upstream.baseUrl),
    });
  });
  after(async () => {
    await gateway?.stop('SIGKILL');
    await relay?.close();
    await upstream?.close();
  });

  test('503 credit_check_failed during the outage, never unmetered; no double charge; recovers by itself', async () => {
    const url = gateway.url;
    const tenant = await createTenant(url, { credit: '10.00' });
    await setExactPrice(url, tenant.orgId);
    const book = costBook();
    for (let index = 0; index < 3; index++) assert.equal(book.take(await chat(url, tenant.key)).status, 200);

    // Calls in flight when Redis goes: reserved before, settled (in Redis) only after it is back.
    const inFlight = Array.from({ length: 3 }, () => chat(url, tenant.key, {}, '[local:sleep:1500] '));
    await new Promise((resolve) => setTimeout(resolve, 500));
    relay.cut();
    for (const reply of await Promise.all(inFlight)) assert.equal(book.take(reply).status, 200, JSON.stringify(reply.body));

    const upstreamCalls = upstream.received.length;
    const during = await Promise.all([
      ...Array.from({ length: 3 }, () => chat(url, tenant.key)),
      ...Array.from({ length: 3 }, () => chat(url, tenant.key, { model: 'fake-chat' })),
      chat(url, tenant.key, { stream: true }),
    ]);
    for (const reply of during) {
      assert.equal(reply.status, 503, JSON.stringify(reply.body));
      assert.equal(reply.body.error.code, 'credit_check_failed');
    }
    assert.equal(upstream.received.length, upstreamCalls, 'no call ran unmetered');
    // What does not need Redis keeps working: key lookup (from the database) and the model list.
    assert.equal((await keyCall(url, tenant.key, 'GET', '/v1/models')).status, 200);
    const notReady = await keyCall(url, tenant.key, 'GET', '/readyz');
    assert.equal(notReady.status, 503);
    assert.equal(notReady.body.checks.redis, false);

    relay.restore();
    await waitFor(
      async () => {
        const reply = book.take(await chat(url, tenant.key));
        return reply.status === 200 ? reply : undefined;
      },
      15_000,
      'a metered call to succeed after Redis is back',
    );
    for (let index = 0; index < 3; index++) assert.equal(book.take(await chat(url, tenant.key)).status, 200);
    assert.equal((await keyCall(url, tenant.key, 'GET', '/readyz')).status, 200);

    // The ledger has every successful call once, at the cost it returned.
    assert.deepEqual(await recordedSpend(url, tenant.key), { count: book.costs.length, nanos: book.total() });
    // The shared counters agree once the settlements that failed during the outage are replayed, and
    // the credit the instance claimed for the key's next calls is given back once the key is idle.
    const balance = await waitFor(
      async () => {
        const reply = await keyCall(url, tenant.key, 'GET', '/api/credits/balance');
        return reply.status === 200 && usdToNanos(reply.body.spent_usd) === book.total() && usdToNanos(reply.body.reserved_usd) === 0 ? reply : undefined;
      },
      10_000,
      `spent_usd to equal the returned costs (${book.total()} nano-USD)`,
    ).catch(async (error) => {
      const reply = await keyCall(url, tenant.key, 'GET', '/api/credits/balance');
      throw new Error(`${(error as Error).message}; balance ${JSON.stringify(reply.body)}`);
    });
    assert.equal(usdToNanos(balance.body.reserved_usd), 0, 'no hold left behind');
  });
});

describe('Postgres goes away mid-traffic and comes back', { skip }, () => {
  let relay: TcpRelay;
  let databaseUrl: string;
  let gateway: GatewayProcess | undefined;
  let environment: Record<string, string>;

  before(async () => {
    databaseUrl = await postgres.create();
    relay = await startTcpRelay(databaseUrl, 5432);
    environment = { GW_DATABASE_URL: relay.url, GW_REDIS_URL: await freshRedisDb(11) };
    gateway = await spawnClusterMember(environment);
  });
  after(async () => {
    await gateway?.stop('SIGKILL');
    await relay?.close();
  });

  async function ledgerRows(orgId: string): Promise<{ count: number; nanos: number }> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const result = await client.query('select count(*)::int as count, coalesce(sum(cost_nanos), 0)::bigint as nanos from spend_ledger where org_id = $1', [orgId]);
      return { count: Number(result.rows[0].count), nanos: Number(result.rows[0].nanos) };
    } finally {
      await client.end();
    }
  }

  test('cached keys keep working, ledger rows wait and land, uncached keys get 503, recovers by itself', async () => {
    const url = gateway!.url;
    const tenant = await createTenant(url, { credit: '10.00' });
    await setExactPrice(url, tenant.orgId);
    const unused = await createTenant(url, { credit: '1.00' });
    const book = costBook();
    for (let index = 0; index < 2; index++) assert.equal(book.take(await chat(url, tenant.key)).status, 200);

    relay.cut();
    // The key, its org, prices and the credit counters are all in memory or Redis: calls go on.
    for (let index = 0; index < 4; index++) {
      const reply = book.take(await chat(url, tenant.key));
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
    }
    // A key this instance has never seen must be looked up: 503, not a false 401.
    const uncached = await chat(url, unused.key);
    assert.equal(uncached.status, 503, JSON.stringify(uncached.body));
    assert.equal(uncached.body.error.code, 'service_unavailable');
    const admin = await adminCall(url, 'GET', `/api/admin/orgs/${tenant.orgId}`);
    assert.ok(admin.status >= 500, `admin read during the outage: ${admin.status}`);
    const notReady = await keyCall(url, tenant.key, 'GET', '/readyz');
    assert.equal(notReady.status, 503);
    assert.equal(notReady.body.checks.database, false);

    relay.restore();
    await waitFor(
      async () => ((await keyCall(url, tenant.key, 'GET', '/readyz')).status === 200 ? true : undefined),
      15_000,
      'readiness after Postgres is back',
    );
    assert.equal((await chat(url, unused.key)).status, 200);
    // The rows of the calls made during the outage were kept and written after it.
    assert.deepEqual(await recordedSpend(url, tenant.key), { count: book.costs.length, nanos: book.total() });
  });

  test('SIGTERM during a Postgres outage still lands the queued ledger rows once the database is back', async () => {
    const url = gateway!.url;
    const tenant = await createTenant(url, { credit: '10.00' });
    await setExactPrice(url, tenant.orgId);
    const book = costBook();
    assert.equal(book.take(await chat(url, tenant.key)).status, 200);
    relay.cut();
    for (let index = 0; index < 3; index++) assert.equal(book.take(await chat(url, tenant.key)).status, 200);
    const exited = gateway!.stop('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    relay.restore();
    assert.equal(await exited, 0, gateway!.output());
    gateway = undefined;
    assert.deepEqual(await ledgerRows(tenant.orgId), { count: book.costs.length, nanos: book.total() });
  });
});

describe('an instance stopped while Redis is away', { skip }, () => {
  let relay: TcpRelay;
  let environment: Record<string, string>;
  const gateways: GatewayProcess[] = [];

  before(async () => {
    relay = await startTcpRelay(await freshRedisDb(12), 6379);
    environment = { GW_DATABASE_URL: await postgres.create(), GW_REDIS_URL: relay.url };
  });
  after(async () => {
    for (const gateway of gateways) await gateway.stop('SIGKILL');
    await relay?.close();
  });

  test('the settlements it could not replay reach the counters through the next instance: spent equals the costs returned', async () => {
    const first = await spawnClusterMember(environment);
    gateways.push(first);
    const tenant = await createTenant(first.url, { credit: '10.00' });
    await setExactPrice(first.url, tenant.orgId);
    const book = costBook();
    for (let index = 0; index < 2; index++) assert.equal(book.take(await chat(first.url, tenant.key)).status, 200);
    // Running when Redis goes: answered, their settlements queued in the instance.
    const inFlight = Array.from({ length: 3 }, () => chat(first.url, tenant.key, {}, '[local:sleep:1500] '));
    await new Promise((resolve) => setTimeout(resolve, 500));
    relay.cut();
    for (const reply of await Promise.all(inFlight)) assert.equal(book.take(reply).status, 200, JSON.stringify(reply.body));
    // Stopped before Redis returns: the queue cannot be replayed.
    assert.equal(await first.stop('SIGTERM'), 0, first.output());
    assert.match(first.output(), /spend counters marked for repair/);

    relay.restore();
    const next = await spawnClusterMember(environment);
    gateways.push(next);
    await waitFor(
      async () => {
        const reply = await keyCall(next.url, tenant.key, 'GET', '/api/credits/balance');
        return reply.status === 200 && usdToNanos(reply.body.spent_usd) === book.total() ? reply : undefined;
      },
      15_000,
      `spent_usd to equal the returned costs (${book.total()} nano-USD)`,
    ).catch(async (error) => {
      const reply = await keyCall(next.url, tenant.key, 'GET', '/api/credits/balance');
      throw new Error(`${(error as Error).message}; balance ${JSON.stringify(reply.body)}`);
    });
  });
});
