import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fakes/fake-openai-upstream.js';
import { adminRequest, startGateway, type RunningGateway } from '../helpers/start-gateway.js';
import { REDIS_SKIP, TEST_REDIS_URL, tempDirectory } from '../helpers/test-databases.js';

/** The logical Redis database the cache is sent to with GW_CACHE_REDIS_URL (the rest stays on the URL's own). */
const CACHE_DB = 3;

function withDatabase(url: string, db: number): string {
  const parsed = new URL(url);
  parsed.pathname = `/${db}`;
  return parsed.toString();
}

const modes: Array<{ name: string; skip: string | false; config: { redisUrl?: string; cacheRedisUrl?: string } }> = [
  { name: 'embedded', skip: false, config: {} },
  {
    name: 'Redis, cache on GW_CACHE_REDIS_URL',
    skip: REDIS_SKIP,
    config: TEST_REDIS_URL ? { redisUrl: TEST_REDIS_URL, cacheRedisUrl: withDatabase(TEST_REDIS_URL, CACHE_DB) } : {},
  },
];

/** What the cache stores and who gets it: post-call guardrails on hits, fallback answers, where entries live. */
for (const mode of modes) {
  describe(`response cache answers (${mode.name})`, { skip: mode.skip }, () => {
    let upstream: FakeOpenAIUpstream;
    let running: RunningGateway;

    before(async () => {
      upstream = await startFakeOpenAIUpstream();
      const configFile = join(tempDirectory(), 'gw.yaml');
      const model = (id: string, extra: string[] = []) => [
        `  - id: ${id}`,
        '    owned_by: openai',
        ...extra,
        '    deployments:',
        '      - provider: openai-compatible',
        `        upstream_model: up-${id}`,
        `        base_url: ${upstream.baseUrl}`,
        '        api_key_env: FAKE_UPSTREAM_KEY',
        '        pricing: { inputPerMillion: "0.15", outputPerMillion: "0.60" }',
      ];
      writeFileSync(
        configFile,
        ['models:', ...model('gpt-4o-mini'), ...model('primary', ['    fallbacks:', '      - { model: backup, on: [any] }']), ...model('backup')].join('\n'),
      );
      running = await startGateway({ config: { configFile, ...mode.config }, environment: { FAKE_UPSTREAM_KEY: 'k' } });
    });
    after(async () => {
      await running?.close();
      await upstream?.close();
    });

    /** A fresh org with credit and a key, so one test's default guardrails do not reach another's calls. */
    async function newOrgKey(): Promise<{ orgId: string; key: string }> {
      const org = await adminRequest(running, 'POST', '/api/admin/orgs', { name: `cache ${randomBytes(4).toString('hex')}`, tier: 'enterprise' });
      assert.equal(org.status, 200, JSON.stringify(org.body));
      assert.equal((await adminRequest(running, 'POST', `/api/admin/orgs/${org.body.id}/credits`, { amount_usd: '10.00', note: 'test' })).status, 200);
      const key = await adminRequest(running, 'POST', '/api/admin/keys', { org_id: org.body.id, name: 'cache' });
      assert.equal(key.status, 200, JSON.stringify(key.body));
      return { orgId: org.body.id, key: key.body.key };
    }

    async function chat(key: string, body: Record<string, unknown>) {
      const response = await fetch(`${running.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', ...body }),
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, text, body: response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined };
    }

    const answer = (content: string) => ({
      status: 200,
      body: {
        id: 'chatcmpl-scripted',
        object: 'chat.completion',
        created: 1,
        model: 'up',
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
      },
    });

    test('a hit is checked by the caller\'s post-call guardrails, even when the answer was stored by a call that opted out', async () => {
      const { orgId, key } = await newOrgKey();
      const guardrail = await adminRequest(running, 'POST', '/api/admin/guardrails', { org_id: orgId, name: 'no-pii-out', kind: 'pii', stage: 'post', action: 'block' });
      assert.equal(guardrail.status, 200, JSON.stringify(guardrail.body));
      const body = { messages: [{ role: 'user', content: `who to mail ${randomBytes(4).toString('hex')}` }] };
      upstream.script.push(answer('mail bob@example.com'));

      const before = upstream.received.length;
      const optedOut = await chat(key, { ...body, gw_guardrail_ids: [] });
      assert.equal(optedOut.status, 200, optedOut.text);
      assert.equal(optedOut.headers.get('x-gw-cache'), 'miss');
      assert.equal(optedOut.body.choices[0].message.content, 'mail bob@example.com');

      const guarded = await chat(key, body);
      assert.equal(guarded.status, 400, guarded.text);
      assert.equal(guarded.body.error.code, 'guardrail_blocked');

      const guardedStream = await chat(key, { ...body, stream: true });
      assert.equal(guardedStream.status, 400, guardedStream.text);
      assert.equal(JSON.parse(guardedStream.text).error.code, 'guardrail_blocked');

      // The entry is still the upstream's answer, and was read from the cache each time.
      const again = await chat(key, { ...body, gw_guardrail_ids: [] });
      assert.equal(again.headers.get('x-gw-cache'), 'hit');
      assert.equal(again.body.choices[0].message.content, 'mail bob@example.com');
      assert.equal(upstream.received.length, before + 1);
    });

    test('a post-call guardrail added after an answer was stored applies to its hits, redacting a replayed stream', async () => {
      const { orgId, key } = await newOrgKey();
      const body = { messages: [{ role: 'user', content: `contact ${randomBytes(4).toString('hex')}` }] };
      upstream.script.push(answer('write to jane@example.com'));
      assert.equal((await chat(key, body)).headers.get('x-gw-cache'), 'miss');

      const guardrail = await adminRequest(running, 'POST', '/api/admin/guardrails', { org_id: orgId, name: 'pii-redact-out', kind: 'pii', stage: 'post', action: 'redact' });
      assert.equal(guardrail.status, 200, JSON.stringify(guardrail.body));
      // Admin changes reach the request path through the change feed.
      await new Promise((resolve) => setTimeout(resolve, 300));

      const hit = await chat(key, body);
      assert.equal(hit.headers.get('x-gw-cache'), 'hit');
      assert.equal(hit.body.choices[0].message.content, 'write to [REDACTED_EMAIL]');

      const stream = await chat(key, { ...body, stream: true });
      assert.equal(stream.status, 200, stream.text);
      assert.equal(stream.headers.get('x-gw-cache'), 'hit');
      assert.equal(stream.headers.get('x-gw-stream-buffered'), 'true');
      const text = stream.text
        .split('\n')
        .filter((line) => line.startsWith('data: {'))
        .map((line) => JSON.parse(line.slice(6)).choices[0]?.delta?.content ?? '')
        .join('');
      assert.equal(text, 'write to [REDACTED_EMAIL]');
    });

    test('an answer served by a fallback model is not cached as the requested model\'s', async () => {
      const { key } = await newOrgKey();
      const body = { model: 'primary', messages: [{ role: 'user', content: `fallback ${randomBytes(4).toString('hex')}` }] };
      upstream.script.push({ status: 400, body: { error: { message: 'bad request', type: 'invalid_request_error' } } });
      const first = await chat(key, body);
      assert.equal(first.status, 200, first.text);
      assert.match(first.headers.get('x-gw-route') ?? '', /;fallback=backup$/);
      const second = await chat(key, body);
      assert.equal(second.status, 200, second.text);
      assert.equal(second.headers.get('x-gw-cache'), 'miss');
      assert.doesNotMatch(second.headers.get('x-gw-route') ?? '', /fallback/);
      const third = await chat(key, body);
      assert.equal(third.headers.get('x-gw-cache'), 'hit', 'the requested model\'s own answer is stored');
    });

    test('with GW_CACHE_REDIS_URL the entries live in that Redis, not in GW_REDIS_URL\'s', { skip: mode.config.cacheRedisUrl ? false : 'no cache Redis in this mode' }, async () => {
      const { key } = await newOrgKey();
      const marker = `cached-in-db-${randomBytes(6).toString('hex')}`;
      upstream.script.push(answer(marker));
      const first = await chat(key, { messages: [{ role: 'user', content: marker }] });
      assert.equal(first.headers.get('x-gw-cache'), 'miss');
      const holding = async (url: string) => {
        const redis = new Redis(url, { maxRetriesPerRequest: 1 });
        try {
          // The entry is written after the answer went out: give it a moment.
          for (let attempt = 0; attempt < 20; attempt++) {
            const found: string[] = [];
            let cursor = '0';
            do {
              const [next, keys] = await redis.scan(cursor, 'MATCH', 'gw:cache:*', 'COUNT', 1000);
              cursor = next;
              for (const each of keys) if ((await redis.get(each))?.includes(marker)) found.push(each);
            } while (cursor !== '0');
            if (found.length > 0 || url === mode.config.redisUrl) return found;
            await new Promise((resolve) => setTimeout(resolve, 25));
          }
          return [];
        } finally {
          redis.disconnect();
        }
      };
      const inCacheRedis = await holding(mode.config.cacheRedisUrl!);
      assert.equal(inCacheRedis.length, 1);
      assert.deepEqual(await holding(mode.config.redisUrl!), []);
    });
  });
}
