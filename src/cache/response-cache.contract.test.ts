import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { REDIS_SKIP, TEST_REDIS_URL } from '../../test/helpers/test-databases.js';
import { createMemoryResponseCache } from './memory-response-cache.js';
import { createRedisResponseCache } from './redis-response-cache.js';
import type { ResponseCache } from './response-cache.js';

/** One behaviour suite for every ResponseCache implementation. */
function contract(name: string, skip: string | false, make: () => ResponseCache) {
  describe(`ResponseCache contract: ${name}`, { skip }, () => {
    test('a stored value comes back equal, and is a copy', async () => {
      const cache = make();
      const value = { choices: [{ message: { content: 'hi' } }] };
      await cache.set('k1', value, 60_000);
      const read = (await cache.get('k1')) as typeof value;
      assert.deepEqual(read, value);
      read.choices[0].message.content = 'changed';
      assert.deepEqual(await cache.get('k1'), value);
    });

    test('unknown keys miss; delete removes', async () => {
      const cache = make();
      assert.equal(await cache.get('nope'), undefined);
      await cache.set('k2', 1, 60_000);
      await cache.delete('k2');
      assert.equal(await cache.get('k2'), undefined);
    });

    test('entries expire after their TTL; a zero TTL stores nothing', async () => {
      const cache = make();
      await cache.set('k3', 'short', 30);
      await cache.set('k4', 'never', 0);
      await new Promise((resolve) => setTimeout(resolve, 80));
      assert.equal(await cache.get('k3'), undefined);
      assert.equal(await cache.get('k4'), undefined);
    });

    test('set replaces an existing value', async () => {
      const cache = make();
      await cache.set('k5', 'a', 60_000);
      await cache.set('k5', 'b', 60_000);
      assert.equal(await cache.get('k5'), 'b');
    });
  });
}

contract('memory', false, () => createMemoryResponseCache());

const redis = TEST_REDIS_URL ? new Redis(TEST_REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 1 }) : undefined;
after(async () => {
  await redis?.quit();
});
contract('redis', REDIS_SKIP, () => createRedisResponseCache(redis!, { prefix: `gw:cache:test:${randomBytes(6).toString('hex')}:` }));

describe('memory cache bounds', () => {
  test('evicts the least recently used entry past maxEntries', async () => {
    const cache = createMemoryResponseCache({ maxEntries: 2 });
    await cache.set('a', 1, 60_000);
    await cache.set('b', 2, 60_000);
    await cache.get('a');
    await cache.set('c', 3, 60_000);
    assert.equal(await cache.get('b'), undefined);
    assert.equal(await cache.get('a'), 1);
    assert.equal(await cache.get('c'), 3);
  });

  test('stays under maxBytes and skips a value larger than the bound', async () => {
    const cache = createMemoryResponseCache({ maxBytes: 1000 });
    for (let index = 0; index < 20; index++) await cache.set(`key-${index}`, 'x'.repeat(100), 60_000);
    assert.ok(cache.bytes <= 1000);
    assert.ok(cache.size < 20 && cache.size > 0);
    assert.equal(await cache.get('key-19'), 'x'.repeat(100));
    await cache.set('huge', 'y'.repeat(5000), 60_000);
    assert.equal(await cache.get('huge'), undefined);
  });
});

describe('redis cache bounds', { skip: REDIS_SKIP }, () => {
  test('every entry carries its TTL, and an answer past maxEntryBytes is not stored', async () => {
    const prefix = `gw:cache:test:${randomBytes(6).toString('hex')}:`;
    const cache = createRedisResponseCache(redis!, { prefix, maxEntryBytes: 1000 });
    await cache.set('small', 'x'.repeat(100), 60_000);
    const ttl = await redis!.pttl(`${prefix}small`);
    assert.ok(ttl > 0 && ttl <= 60_000, `pttl ${ttl}`);
    await cache.set('large', 'é'.repeat(600), 60_000);
    assert.equal(await cache.get('large'), undefined, '600 characters, but 1,200 bytes');
  });
});
