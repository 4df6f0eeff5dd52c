import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { createRedisChangeFeed, type ChangeFeed } from '../../src/lib/change-feed.js';
import { TEST_REDIS_URL, testRedisConnections } from '../helpers/test-databases.js';

// The change version each instance trusts without reading it on every call: confirmed in the
// background, and never trusted longer than the freshness, which every publish waits out.

const redisUrl = TEST_REDIS_URL;
const feeds: ChangeFeed[] = [];
after(async () => {
  for (const feed of feeds) await feed.close();
});
const connection = testRedisConnections();
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

/** Waits (bounded) until `condition` holds; false when it never did. */
const eventually = async (condition: () => boolean, withinMs = 5_000) => {
  const deadline = performance.now() + withinMs;
  while (!condition() && performance.now() < deadline) await sleep(10);
  return condition();
};

describe('Redis change feed: lost notices', { skip: redisUrl ? false : 'GW_TEST_REDIS_URL is not set' }, () => {
  test('a notice that could not be sent is sent in the background once Redis is back', async () => {
    // enableOfflineQueue false, as in the gateway: a command sent while disconnected fails at once.
    const publisherConnection = connection({ enableOfflineQueue: false, lazyConnect: true });
    publisherConnection.on('error', () => {});
    await publisherConnection.connect();
    const attempts: number[] = [];
    const publisher = createRedisChangeFeed(publisherConnection, connection(), { onPublishError: (_error, _notice, attempt) => attempts.push(attempt) });
    feeds.push(publisher);
    const reader = feed({});
    const heard: unknown[] = [];
    reader.subscribe((notice) => heard.push(notice));
    await sleep(100);

    publisherConnection.disconnect();
    await assert.rejects(publisher.publish({ kind: 'key', id: 'k-lost' }));
    assert.deepEqual(attempts, [1]);
    await sleep(300);
    assert.ok(attempts.length >= 2, 'retried in the background');
    await publisherConnection.connect();
    assert.ok(
      await eventually(() => heard.some((notice) => JSON.stringify(notice).includes('k-lost'))),
      `the other instance heard of the change (heard ${JSON.stringify(heard)})`,
    );
    const sentAfter = attempts.length;
    await sleep(1_500);
    assert.equal(attempts.length, sentAfter, 'no more retries once sent');
  });

  test('a version read ahead of the notices received resyncs everything; a notice that arrives does not', async () => {
    const reader = feed({ freshnessMs: 40, missedNoticeGraceMs: 100 });
    const heard: unknown[] = [];
    reader.subscribe((notice) => heard.push(notice));
    assert.ok((await firstConfirmation(reader)) !== undefined);
    // Whatever the feed delivered while it connected is not what this test is about.
    await sleep(200);
    heard.length = 0;

    // A change announced normally: its notice arrives, no resync.
    await feed({}).publish({ kind: 'catalog' });
    await sleep(300);
    assert.deepEqual(
      heard.map((notice) => (notice as { kind: string }).kind),
      ['catalog'],
    );

    // A change whose notice never reaches this instance (a half-open subscriber socket reports nothing).
    await connection().incr('gw:changes:version');
    assert.ok(await eventually(() => heard.some((notice) => (notice as { kind: string }).kind === 'all')), 'resynced');
    assert.equal(heard.length, 2, 'once');
  });
});
