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

const HEX: string[] = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));
const entropy = Buffer.alloc(4096);
let entropyOffset = entropy.length;
let lastMs = -1;
let sequence = 0;

/**
 * UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, a 12-bit sequence that keeps ids from one
 * process in order within a millisecond, then 62 random bits. Rows of the append-only tables
 * (spend ledger, request log) get these ids so that each insert lands on the right-most page of
 * the primary-key index: with random ids every row touched a different page, which the embedded
 * database had to read and rewrite (measured: ~6 page writes and ~4 page reads per request).
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
  const random = entropyOffset;
  entropyOffset += 8;
  const timeHex = high.toString(16).padStart(8, '0') + (ms & 0xffff).toString(16).padStart(4, '0');
  return (
    `${timeHex.slice(0, 8)}-${timeHex.slice(8, 12)}-` +
    `7${sequence.toString(16).padStart(3, '0')}-` +
    HEX[0x80 | (entropy[random]! & 0x3f)]! +
    HEX[entropy[random + 1]!]! +
    '-' +
    HEX[entropy[random + 2]!]! +
    HEX[entropy[random + 3]!]! +
    HEX[entropy[random + 4]!]! +
    HEX[entropy[random + 5]!]! +
    HEX[entropy[random + 6]!]! +
    HEX[entropy[random + 7]!]!
  );
}

let counter = 0;
const processTag = randomBytes(4).toString('hex');

/** Request ids: unique across instances (random process tag), cheap to make (no syscall per call). */
export function newRequestId(): string {
  counter = (counter + 1) % 0x1000000;
  return `req_${Date.now().toString(36)}${processTag}${counter.toString(36).padStart(5, '0')}`;
}
