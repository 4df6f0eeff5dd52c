import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { redisScript } from '../../src/lib/redis-script.js';
import { sendScript } from '../../src/lib/redis-script-batch.js';
import { writtenCommands } from '../helpers/redis-socket-writes.js';
import { coalesceTurnWrites, sendUnhurried, type TurnWriteOptions } from '../../src/lib/redis-turn-writes.js';
import { nextTurn } from '../helpers/deferred.js';

const redisUrl = process.env.GW_TEST_REDIS_URL;
const clients: Redis[] = [];
after(() => clients.forEach((client) => client.disconnect()));

function client(): Redis {
  const redis = new Redis(redisUrl!, { lazyConnect: true, maxRetriesPerRequest: 1 });
  clients.push(redis);
  return redis;
}

/** A connected client whose writes are coalesced, as the gateway's shared connection is. */
async function coalescedClient(options?: TurnWriteOptions): Promise<Redis> {
  const redis = client();
  coalesceTurnWrites(redis, options);
  await redis.connect();
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
    const redis = await coalescedClient();
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
    const redis = await coalescedClient();
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

  test('the scripts of one turn run as composites of up to six: each gets its own reply or error, in the order issued', async () => {
    const redis = await coalescedClient();
    const commands = writtenCommands(redis);
    const tag = randomUUID();
    const key = `gw-test:${tag}`;
    const read = redisScript(`-- ${tag}\nreturn redis.call('GET', KEYS[1])`);
    const add = redisScript(`-- ${tag}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`);
    const wrongArguments = redisScript(`-- ${tag}\nreturn redis.call('INCR', KEYS[1], 'extra')`);
    const luaFault = redisScript(`-- ${tag}\nlocal missing = nil\nreturn missing + 1`);
    const refusal = redisScript(`-- ${tag}\nreturn redis.error_reply('GWTEST refused ' .. ARGV[1])`);
    const silent = redisScript(`-- ${tag}\nlocal unused = 1`);
    const list = redisScript(`-- ${tag}\nreturn {1, 'two', false, 3}`);
    const run = () =>
      Promise.allSettled([
        read.run(redis, [key], []),
        add.run(redis, [key], [5]),
        wrongArguments.run(redis, [key], []),
        luaFault.run(redis, [], []),
        read.run(redis, [key], []),
        refusal.run(redis, [], ['here']),
        silent.run(redis, [], []),
        list.run(redis, [], []),
        add.run(redis, [key], [2]),
      ]);
    const expect = (outcomes: PromiseSettledResult<unknown>[], added: number) => {
      const values = outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : undefined));
      assert.deepEqual(values, [added === 0 ? null : String(added), added + 5, undefined, undefined, String(added + 5), undefined, null, [1, 'two', null, 3], added + 7]);
      const reasons = outcomes.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as Error).message : ''));
      assert.match(reasons[2]!, /^ERR Wrong number of args/);
      assert.match(reasons[3]!, /^ERR .*arithmetic on local 'missing'/);
      assert.equal(reasons[5], 'GWTEST refused here');
    };
    // Nine scripts: two composites (six, then three), each sent whole on first use, then by SHA-1.
    expect(await run(), 0);
    assert.deepEqual(commands(), ['eval', 'eval']);
    expect(await run(), 7);
    assert.deepEqual(commands(), ['eval', 'eval', 'evalsha', 'evalsha']);
    // A script alone in its turn is sent as itself (whole, as this is its own first use).
    assert.equal(await read.run(redis, [key], []), '14');
    assert.equal(await read.run(redis, [key], []), '14');
    assert.deepEqual(commands().slice(4), ['eval', 'evalsha']);
    await redis.del(key);
  });

  test('a plain command issued after scripts in the same turn runs after them', async () => {
    const redis = await coalescedClient();
    const commands = writtenCommands(redis);
    const key = `gw-test:${randomUUID()}`;
    const add = redisScript(`-- ${randomUUID()}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`);
    const first = add.run(redis, [key], [1]);
    const second = add.run(redis, [key], [10]);
    const plain = redis.get(key);
    const third = add.run(redis, [key], [100]);
    assert.deepEqual(await Promise.all([first, second, plain, third]), [1, 11, '11', 111]);
    // The two scripts before the GET went as one; the one after it alone (each new, so whole).
    assert.deepEqual(commands(), ['eval', 'get', 'eval']);
    await redis.del(key);
  });

  test('unhurried scripts wait for the next urgent ones and run with them, first', async () => {
    const redis = await coalescedClient({ unhurriedWindowMs: 60_000 });
    const tag = randomUUID();
    const key = `gw-test:${tag}`;
    const add = redisScript(`-- ${tag}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`);
    const read = redisScript(`-- ${tag}\nreturn redis.call('GET', KEYS[1])`);
    // Both scripts known to the server, so what follows is one EVALSHA.
    await Promise.all([add.run(redis, [key], [0]), read.run(redis, [key], [])]);
    const commands = writtenCommands(redis);
    const later = sendUnhurried(redis, () => add.run(redis, [key], [5]));
    await nextTurn();
    await nextTurn();
    assert.deepEqual(commands(), [], 'nothing is written while the window is open');
    assert.equal(await read.run(redis, [key], []), '5');
    assert.equal(await later, 5);
    assert.deepEqual(commands(), ['evalsha']);
    await redis.del(key);
  });

  test('a script the server has lost (NOSCRIPT after a restart or flush) is sent whole again and answers', async () => {
    const redis = client();
    await redis.connect();
    const commands = writtenCommands(redis);
    // A SHA-1 the server cannot know stands in for a script its cache no longer has.
    const lost = { lua: `-- ${randomUUID()}\nreturn ARGV[1]`, sha: 'f'.repeat(40) };
    const write = (command: Parameters<Redis['sendCommand']>[0]) => redis.sendCommand(command) as Promise<unknown>;
    assert.equal(await sendScript(redis, lost, [], ['first'], write), 'first');
    assert.equal(await sendScript(redis, lost, [], ['again'], write), 'again');
    assert.deepEqual(commands(), ['eval', 'evalsha', 'eval']);
  });

  test("a script with 128 or more keys or arguments is not batched: it and its turn's others go one by one", async () => {
    const redis = await coalescedClient();
    const tag = randomUUID();
    const count = redisScript(`-- ${tag}\nreturn #ARGV`);
    const echo = redisScript(`-- ${tag}\nreturn ARGV[1]`);
    // Each known to the server on its own (separate turns) and as a pair (one turn).
    await count.run(redis, [], ['warm']);
    await echo.run(redis, [], ['warm']);
    await Promise.all([count.run(redis, [], ['warm']), echo.run(redis, [], ['warm'])]);
    const commands = writtenCommands(redis);
    const many = Array.from({ length: 130 }, (_, index) => String(index));
    assert.deepEqual(await Promise.all([count.run(redis, [], many), echo.run(redis, [], ['small'])]), [130, 'small']);
    assert.deepEqual(commands(), ['evalsha', 'evalsha']);
    // Below the limit, the same pair goes as one.
    assert.deepEqual(await Promise.all([count.run(redis, [], many.slice(0, 127)), echo.run(redis, [], ['small'])]), [127, 'small']);
    assert.deepEqual(commands(), ['evalsha', 'evalsha', 'evalsha']);
  });
});
