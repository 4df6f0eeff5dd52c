import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { CommandArgument } from './redis-encoded-command.js';
import { sendScript, type BatchableScript } from './redis-script-batch.js';
import { queueScript } from './redis-turn-writes.js';

/**
 * A Lua script run by its SHA-1 (EVALSHA); sending the body on every call cost each request a few
 * kilobytes of writes and a hash of the body on the server. Its first use in this process sends
 * the body in its place (see sendScript). On a connection that coalesces its writes
 * (lib/redis-turn-writes.ts), the scripts of one write run as one composite script
 * (lib/redis-script-batch.ts).
 */
export interface RedisScript extends BatchableScript {
  run(redis: Redis, keys: readonly string[], args: readonly CommandArgument[]): Promise<unknown>;
}

let scriptsMade = 0;

export function redisScript(lua: string): RedisScript {
  const script: RedisScript = {
    id: ++scriptsMade,
    lua,
    sha: createHash('sha1').update(lua).digest('hex'),
    run(redis, keys, args) {
      return queueScript(redis, script, keys, args) ?? sendScript(redis, script, keys, args, (command) => redis.sendCommand(command) as Promise<unknown>);
    },
  };
  return script;
}
