import { createHmac, timingSafeEqual } from 'node:crypto';
import { randomBase62 } from '../lib/ids.js';

export const KEY_PREFIX = 'sk-gw-';
const RANDOM_LENGTH = 40;
const KEY_PATTERN = /^sk-gw-[0-9A-Za-z]{32,128}$/;

/** A new virtual key: `sk-gw-` + 40 base62 characters (≈238 bits) from a CSPRNG. */
export function generateVirtualKey(): string {
  return KEY_PREFIX + randomBase62(RANDOM_LENGTH);
}

export function looksLikeVirtualKey(token: string): boolean {
  return KEY_PATTERN.test(token);
}

/** Keys are stored only as HMAC-SHA-256 with a server secret, so a leaked table cannot be brute-forced offline. */
export function hashVirtualKey(key: string, hashKey: Buffer): string {
  return createHmac('sha256', hashKey).update(key).digest('base64url');
}

/** The display form the spec gives: `sk-...<last 4>`. */
export function keyAlias(last4: string): string {
  return `sk-...${last4}`;
}

export function constantTimeEqual(left: string, right: string): boolean {
  const a = Buffer.from(left);
  const b = Buffer.from(right);
  return a.length === b.length && timingSafeEqual(a, b);
}
