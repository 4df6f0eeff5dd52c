import { randomBytes, randomUUID } from 'node:crypto';

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

let counter = 0;
const processTag = randomBytes(4).toString('hex');

/** Request ids: unique across instances (random process tag), cheap to make (no syscall per call). */
export function newRequestId(): string {
  counter = (counter + 1) % 0x1000000;
  return `req_${Date.now().toString(36)}${processTag}${counter.toString(36).padStart(5, '0')}`;
}
