import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fakes/fake-openai-upstream.js';
import {
  adminCall,
  CLUSTER_FIRST_KEY,
  createTenant,
  keyCall,
  recordedSpend,
  setExactPrice,
  spawnClusterMember,
  usdToNanos,
  waitFor,
  writeFakeUpstreamConfig,
} from '../helpers/gateway-cluster.js';
import type { GatewayProcess } from '../helpers/spawn-gateway.js';
import { TEST_DATABASES, TEST_REDIS_URL } from '../helpers/test-databases.js';

/*
 * Three gw processes on one Postgres schema and one Redis behave as one gateway. The stores use
 * fixed `gw:` key names, so this file owns Redis logical database 9 (flushed first); no other test
 * file may use it.
 */
const REDIS_DB = 9;
const postgres = TEST_DATABASES.find((database) => database.name === 'postgres')!;
const skip = postgres.skip || (TEST_REDIS_URL ? false : 'GW_TEST_REDIS_URL is not set (multi-instance test skipped)');

function redisUrlWithDb(db: number): string {
  const url = new URL(TEST_REDIS_URL!);
  url.pathname = `/${db}`;
  return url.toString();
}

const chatBody = (extra: Record<string, unknown> = {}) => ({
  model: 'local-chat',
  messages: [{ role: 'user', content: `Count to ten, please ${randomUUID()}` }],
  max_tokens: 5,
  gw_cache: false,
  ...extra,
});

describe('three gw processes on one Postgres and one Redis', { skip }, () => {
  let upstream: FakeOpenAIUpstream;
  const members: GatewayProcess[] = [];
  let urls: string[] = [];

  before(async () => {
    const redisUrl = redisUrlWithDb(REDIS_DB);
    const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    await redis.flushdb();
    redis.disconnect();
    upstream = await startFakeOpenAIUpstream();
    const environment = {
      GW_DATABASE_URL: await postgres.create(),
      GW_REDIS_URL: redisUrl,
      GW_CONFIG: writeFakeUpstreamConfig(upstream.baseUrl),
    };
    // Only the first process bootstraps the empty database; the others start on what it made.
    members.push(await spawnClusterMember(environment));
    members.push(...(await Promise.all([spawnClusterMember(environment), spawnClusterMember(environment)])));
    urls = members.map((member) => member.url);
  });

  after(async () => {
    await Promise.all(members.map((member) => member.stop('SIGKILL')));
    await upstream?.close();
  });

  test('the bootstrap key works on every instance', async () => {
    for (const url of urls) {
      const models = await keyCall(url, CLUSTER_FIRST_KEY, 'GET', '/v1/models');
      assert.equal(models.status, 200, JSON.stringify(models.body));
    }
  });

  test("a key's RPM limit holds across instances", async () => {
    const tenant = await createTenant(urls[0], { credit: '10.00', key: { limits: { rpm: 12 } } });
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, index) => keyCall(urls[index % 3], tenant.key, 'POST', '/v1/chat/completions', chatBody())),
    );
    const statuses = replies.map((reply) => reply.status);
    assert.equal(statuses.filter((status) => status === 200).length, 12, `statuses: ${statuses.join(',')}`);
    const refused = replies.filter((reply) => reply.status !== 200);
    assert.equal(refused.length, 18);
    for (const reply of refused) {
      assert.equal(reply.status, 429);
      assert.equal(reply.body.error.code, 'rate_limit_exceeded');
      assert.ok(Number(reply.headers.get('retry-after')) >= 1);
    }
  });

  test('past its RPM limit, a key costs the upstream at most the one request that overlapped its first refusal; refused calls log no deployment', async () => {
    const tenant = await createTenant(urls[0], { credit: '10.00', key: { limits: { rpm: 2 } } });
    const body = () => ({ model: 'fake-chat', messages: [{ role: 'user', content: `hello ${randomUUID()}` }], max_tokens: 5, gw_cache: false });
    const before = upstream.received.length;
    const statuses: number[] = [];
    for (let index = 0; index < 8; index++) {
      const reply = await keyCall(urls[1], tenant.key, 'POST', '/v1/chat/completions', body());
      statuses.push(reply.status);
      if (reply.status !== 200) {
        assert.equal(reply.body.error.code, 'rate_limit_exceeded', JSON.stringify(reply.body));
        assert.equal(reply.headers.get('x-gw-route'), null, 'a refused call shows no route');
      }
    }
    assert.deepEqual(statuses, [200, 200, 429, 429, 429, 429, 429, 429]);
    // The two served calls, plus at most the first refused one, whose request left while its
    // admission was answered and was cancelled; after that refusal the key waits for admission.
    const sent = upstream.received.length - before;
    assert.ok(sent >= 2 && sent <= 3, `the upstream received ${sent} requests`);
    const rows = await waitFor(
      async () => {
        const page = await adminCall(urls[0], 'GET', `/api/admin/request-log?key_id=${tenant.keyId}&limit=100`);
        return page.status === 200 && page.body.data.length >= 8 ? (page.body.data as Array<Record<string, unknown>>) : undefined;
      },
      10_000,
      'request-log rows of the eight calls',
    );
    const refusedRows = rows.filter((row) => row.status === 429);
    assert.equal(refusedRows.length, 6);
    for (const row of refusedRows) {
      assert.equal(row.error_code, 'rate_limit_exceeded');
      assert.ok(!row.deployment_id && !row.attempts, `a refused call logs no deployment: ${JSON.stringify(row)}`);
    }
  });

  test('a budget allowing exactly k calls lets exactly k through; spend equals the returned costs', async () => {
    const k = 4;
    // Each call reserves and costs exactly 5000 nano-USD (max_tokens 5 at 1000 nano-USD per output token).
    const tenant = await createTenant(urls[0], { credit: '10.00', key: { budget: { limit_usd: `0.0000${5 * k}`, period: 'none' } } });
    await setExactPrice(urls[0], tenant.orgId);
    const replies = await Promise.all(
      Array.from({ length: 21 }, (_, index) => keyCall(urls[index % 3], tenant.key, 'POST', '/v1/chat/completions', chatBody())),
    );
    const succeeded = replies.filter((reply) => reply.status === 200);
    assert.equal(succeeded.length, k, `statuses: ${replies.map((reply) => reply.status).join(',')}`);
    for (const reply of replies.filter((reply) => reply.status !== 200)) {
      assert.equal(reply.status, 402, JSON.stringify(reply.body));
      assert.equal(reply.body.error.code, 'insufficient_credits');
      assert.equal(reply.body.error.details?.account ?? 'key', 'key');
    }
    const costs = succeeded.map((reply) => usdToNanos(reply.headers.get('x-gw-request-cost') ?? 'missing'));
    assert.deepEqual(costs, Array(k).fill(5000));
    const returned = costs.reduce((sum, cost) => sum + cost, 0);
    // Each instance writes its ledger rows in its own batch window; wait until all have landed.
    const recorded = await waitFor(
      async () => {
        const spend = await recordedSpend(urls[1], tenant.key);
        return spend.count >= k ? spend : undefined;
      },
      10_000,
      'ledger rows from every instance',
    );
    assert.deepEqual(recorded, { count: k, nanos: returned });
    // The shared credit counter agrees with the ledger, whichever instance answers.
    for (const url of urls) {
      const balance = await keyCall(url, tenant.key, 'GET', '/api/credits/balance');
      assert.equal(balance.status, 200, JSON.stringify(balance.body));
      assert.equal(usdToNanos(balance.body.spent_usd), returned, JSON.stringify(balance.body));
    }
    // And a further call on any instance is still refused.
    const again = await keyCall(urls[2], tenant.key, 'POST', '/v1/chat/completions', chatBody());
    assert.equal(again.status, 402);
  });

  test('with room to spare, instances admit calls from their allowances: the limit still holds, spend matches, nothing stays held', async () => {
    // RPM 96: slices of 3 (1/32); credit 10 USD: claims of 32 calls. Calls arrive on all three at once.
    const tenant = await createTenant(urls[0], { credit: '10.00', key: { limits: { rpm: 96 } } });
    await setExactPrice(urls[0], tenant.orgId);
    const replies = await Promise.all(
      Array.from({ length: 150 }, (_, index) => keyCall(urls[index % 3], tenant.key, 'POST', '/v1/chat/completions', chatBody())),
    );
    const succeeded = replies.filter((reply) => reply.status === 200);
    // Never past the limit; short of it by at most the slices left unused when the calls stopped.
    assert.ok(succeeded.length <= 96 && succeeded.length >= 96 - 3 * 3, `${succeeded.length} calls admitted`);
    for (const reply of replies.filter((reply) => reply.status !== 200)) {
      assert.equal(reply.status, 429, JSON.stringify(reply.body));
      assert.equal(reply.body.error.code, 'rate_limit_exceeded');
    }
    const returned = succeeded.reduce((sum, reply) => sum + usdToNanos(reply.headers.get('x-gw-request-cost') ?? 'missing'), 0);
    const recorded = await waitFor(
      async () => {
        const spend = await recordedSpend(urls[1], tenant.key);
        return spend.count >= succeeded.length ? spend : undefined;
      },
      10_000,
      'ledger rows from every instance',
    );
    assert.deepEqual(recorded, { count: succeeded.length, nanos: returned });
    // The shared counters agree, and the credit claimed for the key's next calls is given back once it is idle.
    const balance = await waitFor(
      async () => {
        const reply = await keyCall(urls[2], tenant.key, 'GET', '/api/credits/balance');
        if (usdToNanos(reply.body.spent_usd) === returned && usdToNanos(reply.body.reserved_usd) === 0) return reply;
        // Not yet: waitFor quotes the last of these if it gives up.
        throw new Error(`spent ${reply.body.spent_usd} (answers returned ${returned} nanos), reserved ${reply.body.reserved_usd}`);
      },
      10_000,
      'spend to match and nothing to stay reserved',
    );
    assert.equal(usdToNanos(balance.body.credited_usd), 10e9);
  });

  test('a key revoked on A is rejected on B and C on the very next call', async () => {
    for (let round = 0; round < 3; round++) {
      const tenant = await createTenant(urls[round % 3], { credit: '1.00' });
      // Every instance has the key in its in-memory key cache.
      for (const url of urls) assert.equal((await keyCall(url, tenant.key, 'GET', '/v1/models')).status, 200);
      const revoker = urls[round % 3];
      const revoked = await adminCall(revoker, 'POST', `/api/admin/keys/${tenant.keyId}/revoke`);
      assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
      const others = urls.filter((url) => url !== revoker);
      const upstreamCallsBefore = upstream.received.length;
      const replies = await Promise.all([
        ...others.map((url) => keyCall(url, tenant.key, 'GET', '/v1/models')),
        ...others.map((url) => keyCall(url, tenant.key, 'POST', '/v1/chat/completions', chatBody())),
        // A bad body from a revoked key is still a 401: the cached key is confirmed before any answer.
        ...others.map((url) => keyCall(url, tenant.key, 'POST', '/v1/chat/completions', { model: 'fake-chat' })),
      ]);
      for (const reply of replies) {
        assert.equal(reply.status, 401, JSON.stringify(reply.body));
        assert.equal(reply.body.error.code, 'invalid_api_key');
      }
      assert.equal(upstream.received.length, upstreamCallsBefore, 'nothing reached the upstream for the revoked key');
      assert.equal((await keyCall(revoker, tenant.key, 'GET', '/v1/models')).status, 401);
    }
  });

  test('an answer cached by A is served by B and C without calling the upstream again', async () => {
    const tenant = await createTenant(urls[0], { credit: '1.00' });
    const body = { model: 'fake-chat', messages: [{ role: 'user', content: `cache me ${randomUUID()}` }], max_tokens: 20 };
    const before = upstream.received.length;
    const first = await keyCall(urls[0], tenant.key, 'POST', '/v1/chat/completions', body);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.headers.get('x-gw-cache'), 'miss');
    assert.equal(upstream.received.length, before + 1);
    for (const url of [urls[1], urls[2]]) {
      const hit = await keyCall(url, tenant.key, 'POST', '/v1/chat/completions', body);
      assert.equal(hit.status, 200, JSON.stringify(hit.body));
      assert.equal(hit.headers.get('x-gw-cache'), 'hit');
      assert.equal(usdToNanos(hit.headers.get('x-gw-request-cost') ?? 'missing'), 0);
      assert.deepEqual(hit.body.choices, first.body.choices);
    }
    assert.equal(upstream.received.length, before + 1, 'the upstream was called once');
  });
});
