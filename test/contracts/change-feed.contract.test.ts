import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { createRedisChangeFeed, type ChangeFeed } from '../../src/lib/change-feed.js';

// The change version each instance trusts without reading it on every call: confirmed in the
// background, and never trusted longer than the freshness, which every publish waits out.

const redisUrl = process.env.GW_TEST_REDIS_URL;
const connections: Redis[] = [];
const feeds: ChangeFeed[] = [];
after(async () => {
  for (const feed of feeds) await feed.close();
  for (const connection of connections) connection.disconnect();
});
const connection = () => {
  const redis = new Redis(redisUrl!, { maxRetriesPerRequest: 1 });
  connections.push(redis);
  return redis;
};
const feed = (options: Parameters<typeof createRedisChangeFeed>[2]) => {
  const created = createRedisChangeFeed(connection(), connection(), options);
  feeds.push(created);
  return created;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/**
 * The first confirmation needs a new connection and one round trip; on a loaded host that can take
 * longer than any fixed sleep, so wait for it (bounded) instead of guessing how long it takes.
 */
const firstConfirmation = async (reader: ChangeFeed, withinMs = 5_000) => {
  const deadline = performance.now() + withinMs;
  while (reader.confirmedVersion!() === undefined && performance.now() < deadline) await sleep(5);
  return reader.confirmedVersion!();
};

describe('Redis change feed: confirmed version', { skip: redisUrl ? false : 'GW_TEST_REDIS_URL is not set' }, () => {
  test('once a publish has returned, every instance trusts only the new version (or none)', async () => {
    const freshnessMs = 200;
    const publisher = feed({ freshnessMs });
    const reader = feed({ freshnessMs });
    const before = await firstConfirmation(reader);
    assert.ok(before !== undefined, 'confirmed in the background');
    assert.equal(before, await reader.version!());
    const startedAt = performance.now();
    await publisher.publish({ kind: 'key', id: 'k1' });
    assert.ok(performance.now() - startedAt >= freshnessMs, 'the publish waited the freshness out');
    const afterChange = reader.confirmedVersion!();
    assert.ok(afterChange === undefined || BigInt(afterChange) > BigInt(before), `trusted ${afterChange} after the change (was ${before})`);
    // Trust may lapse (a slow Redis lets the freshness run out), but what is trusted is current.
    const trustedNow = reader.confirmedVersion!();
    const current = await reader.version!();
    assert.ok(trustedNow === undefined || trustedNow === current, `trusted ${trustedNow}, current ${current}`);
  });

  test('a version not confirmed within the freshness is not trusted; freshness 0 trusts nothing', async () => {
    const clock = { now: 0 };
    const reader = feed({ freshnessMs: 1_000, now: () => clock.now });
    assert.ok((await firstConfirmation(reader)) !== undefined, 'confirmed in the background');
    // Confirmations stop arriving (the clock runs past the freshness without another read).
    clock.now = 1_000;
    assert.equal(reader.confirmedVersion!(), undefined);

    const unconfirmed = feed({});
    await sleep(50);
    assert.equal(unconfirmed.confirmedVersion!(), undefined);
    const startedAt = performance.now();
    await unconfirmed.publish({ kind: 'org', id: 'o1' });
    assert.ok(performance.now() - startedAt < 1_000, 'without a freshness a publish does not wait');
  });
});
