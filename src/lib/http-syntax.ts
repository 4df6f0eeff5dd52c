/** A header field name: an RFC 9110 token (§5.6.2), in either case. */
export const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** A Content-Length value: digits only, at most 15 of them (exact as a JavaScript number). */
export const CONTENT_LENGTH_DIGITS = /^\d{1,15}$/;

/**
 * Header names that clients and upstreams send on nearly every exchange, lower case. Their
 * spellings are matched in place (any case) and the constant is returned: no substring, no
 * lower-casing and no token check, and, since a constant is already in V8's string table, no
 * lookup there when the name becomes a property key. On a chat call's request head of five
 * headers this alone took reading it from ~1.7 to ~1.25 µs, warm (`bench/head-parse-cost.mjs`,
 * docs/pipeline.md, "gw's HTTP edge").
 */
const COMMON_HEADER_NAMES = [
  'host',
  'content-type',
  'content-length',
  'authorization',
  'connection',
  'keep-alive',
  'accept',
  'accept-encoding',
  'user-agent',
  'date',
  'server',
  'transfer-encoding',
  'cache-control',
  'x-request-id',
  'request-id',
  'retry-after',
  'openai-organization',
  'openai-processing-ms',
  'openai-version',
  'x-ratelimit-limit-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-requests',
  'x-ratelimit-reset-tokens',
  'x-stainless-lang',
  'x-stainless-package-version',
  'x-stainless-os',
  'x-stainless-arch',
  'x-stainless-runtime',
  'x-stainless-runtime-version',
  'x-stainless-retry-count',
  'x-stainless-timeout',
] as const;

/** COMMON_HEADER_NAMES by length, so a name is compared only with the few of its own length. */
const COMMON_BY_LENGTH: string[][] = [];
for (const name of COMMON_HEADER_NAMES) (COMMON_BY_LENGTH[name.length] ??= []).push(name);

/** Whether `text` from `start` spells `name` (lower case, a token), letters in any case. */
function spellsAt(text: string, start: number, name: string): boolean {
  for (let index = 0; index < name.length; index++) {
    const code = text.charCodeAt(start + index);
    const expected = name.charCodeAt(index);
    // Only A-Z folds onto a-z: a control character or punctuation never matches a letter.
    if (code !== expected && !(code >= 65 && code <= 90 && code + 32 === expected)) return false;
  }
  return true;
}

/**
 * The header name `text` holds from `start` up to `end` (the colon), lower case, or undefined when
 * it is not a token (RFC 9110 §5.6.2) or is `__proto__`, which would reach an object's prototype.
 * Common names come back as constants (COMMON_HEADER_NAMES).
 */
export function headerNameAt(text: string, start: number, end: number): string | undefined {
  const candidates = COMMON_BY_LENGTH[end - start];
  if (candidates !== undefined) {
    for (const name of candidates) if (spellsAt(text, start, name)) return name;
  }
  const name = text.slice(start, end).toLowerCase();
  return HEADER_NAME.test(name) && name !== '__proto__' ? name : undefined;
}

/**
 * A message's head (latin1, as HTTP/1.1 defines it) and its body in one buffer, so that it leaves
 * in one plain write: the gateway's answers (http/edge/edge-answer.ts) and its upstream requests
 * (providers/http/http1-client.ts) alike.
 */
export function headAndBody(head: string, body: string | Buffer | undefined, bodyLength: number): Buffer {
  const bytes = Buffer.allocUnsafe(head.length + bodyLength);
  bytes.write(head, 0, 'latin1');
  if (typeof body === 'string') bytes.write(body, head.length, 'utf8');
  else if (body !== undefined) body.copy(bytes, head.length);
  return bytes;
}
