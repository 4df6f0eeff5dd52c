import { createRequire } from 'node:module';
import type { Command, Redis } from 'ioredis';

/**
 * Sends one Redis command whose wire form (RESP) is written straight into one Buffer.
 *
 * ioredis builds a command's wire form by string concatenation: four `+` per argument, a chain of
 * cons strings that the socket then flattens into one more string before writing. For the
 * gateway's per-call scripts (the rate-limit check, the credit hold and its settlement, the token
 * correction: 10–20 arguments each) was about 11 KB of short-lived heap per call in Postgres +
 * Redis mode, an eighth of everything a call allocates there. A Buffer of the exact size, filled
 * in place, leaves one small view object on the heap; its bytes come from Node's shared buffer
 * pool. Measured with `node bench/allocation-profile.mjs --mode postgres`: 90.6 → 81.3 KB per chat
 * call (fewer young-generation collections; no latency change stood out of the noise side by side).
 *
 * The command goes through `redis.sendCommand` like any other, so it keeps ioredis's queueing,
 * reconnection, offline queue and reply parsing, and the turn coalescing of redis-turn-writes.ts.
 */
export function sendEncodedCommand(redis: Redis, name: string, ...argumentGroups: ReadonlyArray<readonly CommandArgument[]>): Promise<unknown> {
  return redis.sendCommand(encodedCommand(name, ...argumentGroups)) as Promise<unknown>;
}

/** The command sendEncodedCommand sends, for a caller that writes it by its own path; its reply is `command.promise`. */
export function encodedCommand(name: string, ...argumentGroups: ReadonlyArray<readonly CommandArgument[]>): Command {
  EncodedCommand ??= defineEncodedCommand();
  return new EncodedCommand(name, encodeCommand(name, ...argumentGroups));
}

/** Numbers are sent as `String(value)` writes them, as ioredis does. */
export type CommandArgument = string | number;

const CR = 13;
const LF = 10;
const ASTERISK = 42;
const DOLLAR = 36;

type EncodedCommandClass = new (name: string, encoded: Buffer) => Command;

/** Defined on the first command: only a gateway with GW_REDIS_URL set loads ioredis (src/app.ts). */
let EncodedCommand: EncodedCommandClass | undefined;

function defineEncodedCommand(): EncodedCommandClass {
  // A static import of ioredis here loaded the whole client into every embedded gateway (1.2 MB
  // of heap after a full collection) through the Redis script batch's import of this file.
  const { Command: RedisCommand } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  return class EncodedCommand extends RedisCommand {
    constructor(
      name: string,
      private readonly encoded: Buffer,
    ) {
      // Arguments are kept only in encoded form: ioredis reads `args` for key prefixes and cluster
      // slots, neither of which the gateway's connections use, and otherwise only to log them.
      super(name, [], { replyEncoding: 'utf8' });
    }

    override toWritable(): Buffer {
      return this.encoded;
    }
  };
}

/**
 * The command's RESP form, an array of bulk strings: `*<count>\r\n`, then `$<byte length>\r\n
 * <bytes>\r\n` for the name and for every argument of every group, in order.
 */
export function encodeCommand(name: string, ...groups: ReadonlyArray<readonly CommandArgument[]>): Buffer {
  let count = 1;
  let size = bulkSize(name);
  for (const group of groups) {
    count += group.length;
    for (const part of group) size += bulkSize(part);
  }
  size += 1 + decimalDigits(count) + 2;
  const buffer = Buffer.allocUnsafe(size);
  buffer[0] = ASTERISK;
  let offset = writeDecimal(buffer, 1, count);
  buffer[offset++] = CR;
  buffer[offset++] = LF;
  offset = writeBulk(buffer, offset, name);
  for (const group of groups) for (const part of group) offset = writeBulk(buffer, offset, part);
  return buffer;
}

function bulkSize(part: CommandArgument): number {
  const length = Buffer.byteLength(typeof part === 'string' ? part : String(part));
  return 1 + decimalDigits(length) + 2 + length + 2;
}

function writeBulk(buffer: Buffer, start: number, part: CommandArgument): number {
  const text = typeof part === 'string' ? part : String(part);
  buffer[start] = DOLLAR;
  // The byte length was measured once when sizing; measuring again is cheaper than keeping it.
  let offset = writeDecimal(buffer, start + 1, Buffer.byteLength(text));
  buffer[offset++] = CR;
  buffer[offset++] = LF;
  offset += buffer.write(text, offset);
  buffer[offset++] = CR;
  buffer[offset++] = LF;
  return offset;
}

function decimalDigits(value: number): number {
  let digits = 1;
  while (value >= 10) {
    value = Math.floor(value / 10);
    digits++;
  }
  return digits;
}

function writeDecimal(buffer: Buffer, offset: number, value: number): number {
  const end = offset + decimalDigits(value);
  for (let index = end - 1; index >= offset; index--) {
    buffer[index] = 48 + (value % 10);
    value = Math.floor(value / 10);
  }
  return end;
}
