import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { coalesceTurnWrites, sendUnhurried, type TurnWriteOptions } from '../../src/lib/redis-turn-writes.js';
import { nextTurn } from '../helpers/deferred.js';
import { countWrites } from '../helpers/redis-socket-writes.js';

const redisUrl = process.env.GW_TEST_REDIS_URL;
const clients: Redis[] = [];
after(() => clients.forEach((client) => client.disconnect()));

async function connect(coalesce: boolean, options?: TurnWriteOptions): Promise<Redis> {
  const redis = new Redis(redisUrl!, { lazyConnect: true, maxRetriesPerRequest: 1 });
  clients.push(redis);
  if (coalesce) coalesceTurnWrites(redis, options);
  await redis.connect();
  return redis;
}

describe('Redis: the commands of one event-loop turn leave in one write', { skip: redisUrl ? false : 'GW_TEST_REDIS_URL is not set: skipped' }, () => {
  test('three commands issued across a chain of resolved promises go out together, with the right answers', async () => {
    const redis = await connect(true);
    const writes = countWrites(redis);
    const key = `gw-test:${randomUUID()}`;
    // As a call issues them: one, then more after a few awaits that involve no I/O.
    const first = redis.incr(key);
    await Promise.resolve();
    await Promise.resolve();
    const second = redis.incrby(key, 10);
    await null;
    const third = redis.get(key);
    assert.deepEqual(await Promise.all([first, second, third]), [1, 11, '11']);
    assert.equal(writes(), 1);
    // A later turn (after waiting for replies) starts a new batch; nothing stays corked.
    assert.equal(await redis.incr(key), 12);
    assert.equal(writes(), 2);
    assert.equal(redis.stream.writableCorked, 0);
    await redis.del(key);
  });

  test('without it, each command is its own write', async () => {
    const redis = await connect(false);
    const writes = countWrites(redis);
    const key = `gw-test:${randomUUID()}`;
    const first = redis.incr(key);
    await Promise.resolve();
    const second = redis.incr(key);
    assert.deepEqual(await Promise.all([first, second]), [1, 2]);
    assert.equal(writes(), 2);
    await redis.del(key);
  });

  test('commands issued from a timer callback and from a next-tick callback are flushed in the same turn', async () => {
    const redis = await connect(true);
    const key = `gw-test:${randomUUID()}`;
    const fromTimer = await new Promise((resolve, reject) => setTimeout(() => redis.incr(key).then(resolve, reject), 1));
    const fromTick = await new Promise((resolve, reject) => process.nextTick(() => redis.incr(key).then(resolve, reject)));
    assert.deepEqual([fromTimer, fromTick], [1, 2]);
    assert.equal(redis.stream.writableCorked, 0);
    await redis.del(key);
  });

  test('in one pass of the event loop, the first turn writes at once and the turns after it leave together', async () => {
    const redis = await connect(true);
    const writes = countWrites(redis);
    const key = `gw-test:${randomUUID()}`;
    const writesSeen: number[] = [];
    // Callbacks queued together with setImmediate run in one pass, each a turn of its own, as ready
    // sockets do. (Timers due together did too, but not always: one in ten runs split them.)
    const answers = await new Promise<unknown[]>((resolve, reject) => {
      const pending: Promise<unknown>[] = [];
      for (let index = 0; index < 3; index++) {
        setImmediate(() => {
          writesSeen.push(writes());
          pending.push(redis.incr(key));
          if (pending.length === 3) Promise.all(pending).then(resolve, reject);
        });
      }
    });
    assert.deepEqual(answers, [1, 2, 3]);
    // The first turn's command was written before the second turn ran; the other two waited.
    assert.deepEqual(writesSeen, [0, 1, 1]);
    assert.equal(writes(), 2);
    // The next pass starts afresh: its lone command is written at the end of its turn.
    const lone = redis.incr(key);
    await new Promise<void>((resolve) => process.nextTick(resolve));
    assert.equal(writes(), 3);
    assert.equal(await lone, 4);
    assert.equal(redis.stream.writableCorked, 0);
    await redis.del(key);
  });

  test('an unhurried command waits for the next urgent write, leaves with it, and runs first', async () => {
    // A window far longer than the test: only the urgent command can send it.
    const redis = await connect(true, { unhurriedWindowMs: 60_000 });
    const writes = countWrites(redis);
    const key = `gw-test:${randomUUID()}`;
    let settled = false;
    const unhurried = sendUnhurried(redis, () => redis.incrby(key, 5)).then((value) => {
      settled = true;
      return value;
    });
    await nextTurn();
    await nextTurn();
    assert.equal(writes(), 0, 'nothing is written while the window is open');
    assert.equal(settled, false);
    // The urgent read sees the unhurried increment: the connection keeps the order of issue.
    assert.equal(await redis.get(key), '5');
    assert.equal(await unhurried, 5);
    assert.equal(writes(), 1);
    assert.equal(redis.stream.writableCorked, 0);
    await redis.del(key);
  });

  test('with no urgent command, the window ends and sends the unhurried ones together', async () => {
    const redis = await connect(true, { unhurriedWindowMs: 200 });
    const writes = countWrites(redis);
    const key = `gw-test:${randomUUID()}`;
    const first = sendUnhurried(redis, () => redis.incr(key));
    await nextTurn();
    const second = sendUnhurried(redis, () => redis.incr(key));
    await nextTurn();
    assert.equal(writes(), 0);
    assert.deepEqual(await Promise.all([first, second]), [1, 2]);
    assert.equal(writes(), 1);
    assert.equal(redis.stream.writableCorked, 0);
    await redis.del(key);
  });

  test('an urgent command issued inside an unhurried one\'s turn still leaves in that turn', async () => {
    const redis = await connect(true, { unhurriedWindowMs: 60_000 });
    const writes = countWrites(redis);
    const key = `gw-test:${randomUUID()}`;
    const unhurried = sendUnhurried(redis, () => redis.incr(key));
    const urgent = redis.incr(key);
    assert.deepEqual(await Promise.all([unhurried, urgent]), [1, 2]);
    assert.equal(writes(), 1);
    await redis.del(key);
  });

  test('on a connection without coalescing, an unhurried command is sent at once', async () => {
    const redis = await connect(false);
    const writes = countWrites(redis);
    const key = `gw-test:${randomUUID()}`;
    const unhurried = sendUnhurried(redis, () => redis.incr(key));
    assert.equal(writes(), 1);
    assert.equal(await unhurried, 1);
    await redis.del(key);
  });
});
