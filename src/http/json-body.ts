import { GatewayError } from '../errors/gateway-error.js';
import { rememberJsonText } from '../lib/json-source-text.js';

/**
 * How deeply a request body's objects and arrays may nest (docs/errors.md, "Limits"). Real bodies
 * stay far below it: a tool's JSON schema rarely passes 10 levels. Past it, code that walks a body
 * recursively (the token counter, the cache key, JSON.stringify) would overflow the stack.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * A JSON request body as the handlers receive it, or the 400 the client gets instead. Shared by
 * Fastify's content-type parser and the direct JSON routes (direct-json-routes.ts), so both
 * answer a bad body alike.
 */
export function parseJsonBody(text: string): unknown {
  if (text === '') throw new GatewayError('invalid_request', 'The request body is empty; send a JSON object.');
  // Before parsing: JSON.parse itself takes seconds over millions of nested brackets, and the reviver recurses.
  if (!opensAtMost(text, MAX_JSON_DEPTH) && nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    throw new GatewayError('invalid_request', `The request body is nested too deeply: objects and arrays may nest at most ${MAX_JSON_DEPTH} levels.`);
  }
  // The reviver costs time; only bodies that may hold a __proto__ key pay it. Their text, which
  // still holds the key, is not kept as the body's source (lib/json-source-text.ts).
  const revived = mayHoldPrototypeKey(text);
  let body: unknown;
  try {
    body = revived ? JSON.parse(text, rejectPrototypeKeys) : JSON.parse(text);
  } catch {
    throw new GatewayError('invalid_request', 'The request body is not valid JSON.');
  }
  if (!revived) rememberJsonText(body, text);
  return body;
}

/**
 * A `\u` escape of one of the letters of `__proto__` (`_`, `p`, `r`, `o`, `t`): JSON lets a key
 * spell `"__pro\u0074o__"`, which parses to the same own `__proto__` key as the plain spelling.
 * Clients escape non-ASCII text, rarely these ASCII letters, so bodies pay the reviver seldom.
 */
const ESCAPED_PROTOTYPE_LETTER = /\\u00(?:5[fF]|6[fF]|7[024])/;

function mayHoldPrototypeKey(text: string): boolean {
  return text.includes('"__proto__"') || (text.includes('\\u00') && ESCAPED_PROTOTYPE_LETTER.test(text));
}

/** JSON.parse reviver: drops keys that could pollute prototypes if a body were ever merged into an object. */
function rejectPrototypeKeys(key: string, value: unknown): unknown {
  if (key === '__proto__') return undefined;
  return value;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * True when the JSON text opens more than `limit` objects or arrays inside one another. One pass
 * that counts brackets outside strings and jumps over each string with indexOf, so the text of
 * messages (most of a chat body) is skipped natively: ~0.8 µs for a 1 KB chat body (JSON.parse
 * takes ~3 µs), ~0.5 ms for 10 MB of message text. Text that is not valid JSON gets some answer
 * here and its 400 from JSON.parse.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  const length = text.length;
  for (let index = 0; index < length; index++) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) index = closingQuote(text, index);
    else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) depth--;
  }
  return false;
}

/**
 * True when the text holds no more than `limit` opening brackets in all (inside strings or not),
 * so that nothing in it can nest deeper: a few native searches, where a chat body has a handful of
 * brackets, so most bodies skip the exact scan of nestsDeeperThan.
 */
function opensAtMost(text: string, limit: number): boolean {
  let count = 0;
  for (const bracket of OPENING_BRACKETS) {
    for (let at = text.indexOf(bracket); at !== -1; at = text.indexOf(bracket, at + 1)) {
      if (++count > limit) return false;
    }
  }
  return true;
}

const OPENING_BRACKETS = ['{', '['] as const;

/** The index of the quote that ends the string opened at `opening` (one not escaped by an odd run of backslashes), or the text's length. */
function closingQuote(text: string, opening: number): number {
  let index = opening;
  for (;;) {
    index = text.indexOf('"', index + 1);
    if (index === -1) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(index - 1 - backslashes) === BACKSLASH) backslashes++;
    if ((backslashes & 1) === 0) return index;
  }
}
