import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { sendEncodedCommand, type CommandArgument } from './redis-encoded-command.js';

/**
 * A Lua script run by its SHA-1 (EVALSHA). Sending the body on every call cost each request a few
 * kilobytes of writes and a hash of the body on the server.
 */
export interface RedisScript {
  run(redis: Redis, keys: readonly string[], args: readonly CommandArgument[]): Promise<unknown>;
}

export function redisScript(lua: string): RedisScript {
  const script: ScriptSource = { lua, sha: createHash('sha1').update(lua).digest('hex') };
  return {
    run: (redis, keys, args) => sendScript(redis, script, keys, args),
  };
}

export interface ScriptSource {
  readonly lua: string;
  readonly sha: string;
}

/** Scripts this process has had answered once when sent whole: Redis keeps what EVAL ran in its script cache. */
const answeredWhole = new WeakSet<ScriptSource>();

/**
 * Runs a script by its SHA-1. Its first use in this process sends the body (EVAL) in the script's
 * place among the connection's commands: answering EVALSHA's NOSCRIPT with the body instead
 * would run the script one round trip late, after commands issued meanwhile, and the meter relies
 * on a connection's commands running in the order issued (a settlement before the next hold).
 * A NOSCRIPT later (a restarted or flushed server) still gets the body, late. Encoded straight
 * into one buffer: these scripts run several times on every call.
 */
export async function sendScript(redis: Redis, script: ScriptSource, keys: readonly string[], args: readonly CommandArgument[]): Promise<unknown> {
  if (!answeredWhole.has(script)) {
    const reply = await sendEncodedCommand(redis, 'eval', [script.lua, keys.length], keys, args);
    answeredWhole.add(script);
    return reply;
  }
  try {
    return await sendEncodedCommand(redis, 'evalsha', [script.sha, keys.length], keys, args);
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
    return redis.eval(script.lua, keys.length, ...keys, ...args);
  }
}
