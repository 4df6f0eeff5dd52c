import { randomBytes, randomFillSync, randomUUID } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform base62 from a CSPRNG (rejection sampling, so no modulo bias). */
export function randomBase62(length: number): string {
  let output = '';
  while (output.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) output += BASE62[byte % 62];
      if (output.length === length) break;
    }
  }
  return output;
}

export function newId(): string {
  return randomUUID();
}

const HEX_CODES = Buffer.from('0123456789abcdef', 'latin1');
const entropy = Buffer.alloc(4096);
let entropyOffset = entropy.length;
let lastMs = -1;
let sequence = 0;
/** The id is written here as ASCII and read back once: one flat string, not a rope of pieces. */
const idBytes = Buffer.alloc(36);

function putHexByte(byte: number, at: number): void {
  idBytes[at] = HEX_CODES[byte >> 4]!;
  idBytes[at + 1] = HEX_CODES[byte & 15]!;
}

/**
 * UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, a 12-bit sequence that keeps ids from one
 * process in order within a millisecond, then 62 random bits. Rows of the append-only tables
 * (spend ledger, request log) get these ids so that each insert lands on the right-most page of
 * the primary-key index: with random ids every row touched a different page, which the embedded
 * database had to read and rewrite (measured: ~6 page writes and ~4 page reads per request).
 *
 * The rows keep their ids until the next batch write, long enough to be promoted out of the young
 * generation; built by concatenation an id was a chain of ~16 string pieces (~400 bytes), written
 * into a buffer it is one 36-character string.
 */
export function newTimeOrderedId(now = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    sequence = 0;
  } else if (++sequence > 0xfff) {
    // More than 4,096 ids in one millisecond: borrow the next millisecond to stay in order.
    lastMs += 1;
    sequence = 0;
  }
  if (entropyOffset + 8 > entropy.length) {
    randomFillSync(entropy);
    entropyOffset = 0;
  }
  const ms = lastMs;
  const high = Math.floor(ms / 0x10000);
  const low = ms % 0x10000;
  const random = entropyOffset;
  entropyOffset += 8;
  // xxxxxxxx-xxxx-7sss-vrrr-rrrrrrrrrrrr: 48 bits of milliseconds, version 7, the sequence, the variant.
  putHexByte((high >>> 24) & 0xff, 0);
  putHexByte((high >>> 16) & 0xff, 2);
  putHexByte((high >>> 8) & 0xff, 4);
  putHexByte(high & 0xff, 6);
  idBytes[8] = 0x2d;
  putHexByte(low >> 8, 9);
  putHexByte(low & 0xff, 11);
  idBytes[13] = 0x2d;
  idBytes[14] = 0x37;
  idBytes[15] = HEX_CODES[(sequence >> 8) & 0xf]!;
  putHexByte(sequence & 0xff, 16);
  idBytes[18] = 0x2d;
  putHexByte(0x80 | (entropy[random]! & 0x3f), 19);
  putHexByte(entropy[random + 1]!, 21);
  idBytes[23] = 0x2d;
  for (let index = 0; index < 6; index++) putHexByte(entropy[random + 2 + index]!, 24 + index * 2);
  return idBytes.toString('latin1', 0, 36);
}

/**
 * The lowest time-ordered id a row written at `ms` or later can have: its first 48 bits as the id
 * writes them. Every id made before `ms` sorts below it (they compare as plain strings).
 */
export function timeOrderedIdFloor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-`;
}

let counter = 0;
const processTag = randomBytes(4).toString('hex');

/** Request ids: unique across instances (random process tag), cheap to make (no syscall per call). */
export function newRequestId(): string {
  counter = (counter + 1) % 0x1000000;
  return `req_${Date.now().toString(36)}${processTag}${counter.toString(36).padStart(5, '0')}`;
}
