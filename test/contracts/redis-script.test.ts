import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { redisScript, sendScript } from '../../src/lib/redis-script.js';
import { writtenCommands } from '../helpers/redis-socket-writes.js';
import { coalesceTurnWrites } from '../../src/lib/redis-turn-writes.js';

const redisUrl = process.env.GW_TEST_REDIS_URL;
const clients: Redis[] = [];
after(() => clients.forEach((client) => client.disconnect()));

function client(): Redis {
  const redis = new Redis(redisUrl!, { lazyConnect: true, maxRetriesPerRequest: 1 });
  clients.push(redis);
  return redis;
}

// Echoes what it received, so the test sees every key and argument as Redis decoded them.
const echo = () =>
  redisScript(`-- ${randomUUID()}
local out = {#KEYS}
for _, key in ipairs(KEYS) do out[#out + 1] = key end
for _, arg in ipairs(ARGV) do out[#out + 1] = arg end
return out`);

describe('Redis scripts sent in their encoded form', { skip: redisUrl ? false : 'GW_TEST_REDIS_URL is not set: skipped' }, () => {
  test('keys and arguments reach the script as sent: multi-byte, empty and numeric ones included; the script is loaded on first use', async () => {
    const redis = client();
    coalesceTurnWrites(redis);
    await redis.connect();
    const script = echo();
    const keys = [`gw-test:${randomUUID()}:é✓`, 'gw-test:🙂'];
    // Lengths at digit boundaries (10 and 100 bytes) as well: a wrong length prefix breaks the protocol.
    const args = ['', 'line\r\nbreak', 42, 0.5, 'x'.repeat(10), 'y'.repeat(100)];
    const echoed = [2, keys[0], keys[1], '', 'line\r\nbreak', '42', '0.5', 'x'.repeat(10), 'y'.repeat(100)];
    // First run: the body is sent (EVAL); then by SHA.
    assert.deepEqual(await script.run(redis, keys, args), echoed);
    assert.deepEqual(await script.run(redis, keys, args), echoed);
    // Several in one turn (one corked write) answer each its own.
    const many = await Promise.all(Array.from({ length: 50 }, (_, index) => script.run(redis, [`k${index}`], [String(index)])));
    many.forEach((reply, index) => assert.deepEqual(reply, [1, `k${index}`, String(index)]));
  });

  test('a script run before the connection is ready waits in the offline queue and then runs', async () => {
    const redis = client();
    const script = echo();
    // A lazy client connects on its first command; the command is written once the connection is up.
    const pending = script.run(redis, ['gw-test:offline'], ['queued']);
    assert.notEqual(redis.status, 'ready');
    assert.deepEqual(await pending, [1, 'gw-test:offline', 'queued']);
  });

  test('an error raised by the script rejects its call, and the connection goes on answering', async () => {
    const redis = client();
    await redis.connect();
    const failing = redisScript(`-- ${randomUUID()}\nreturn redis.error_reply('GWTEST refused ' .. ARGV[1])`);
    await assert.rejects(failing.run(redis, [], ['here']), /GWTEST refused here/);
    assert.equal(await redis.ping(), 'PONG');
  });

  test("a script's first use sends its body in its place: commands issued after it run after it", async () => {
    const redis = client();
    coalesceTurnWrites(redis);
    await redis.connect();
    const commands = writtenCommands(redis);
    const key = `gw-test:${randomUUID()}`;
    const add = redisScript(`-- ${randomUUID()}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`);
    const first = add.run(redis, [key], [1]);
    const read = redis.get(key);
    assert.deepEqual(await Promise.all([first, read]), [1, '1']);
    assert.equal(await add.run(redis, [key], [10]), 11);
    assert.deepEqual(commands(), ['eval', 'get', 'evalsha']);
    await redis.del(key);
  });

  test('a script the server has lost (NOSCRIPT after a restart or flush) is sent whole again and answers', async () => {
    const redis = client();
    await redis.connect();
    const commands = writtenCommands(redis);
    // A SHA-1 the server cannot know stands in for a script its cache no longer has.
    const lost = { lua: `-- ${randomUUID()}\nreturn ARGV[1]`, sha: 'f'.repeat(40) };
    assert.equal(await sendScript(redis, lost, [], ['first']), 'first');
    assert.equal(await sendScript(redis, lost, [], ['again']), 'again');
    assert.deepEqual(commands(), ['eval', 'evalsha', 'eval']);
  });
});
