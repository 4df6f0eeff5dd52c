/**
 * Finding a key's string value in JSON text (or its UTF-8 bytes) without parsing the whole text.
 * Sound for valid JSON: a quote inside a string is always escaped, so a quoted key such as
 * `"model"` found in the text is a key or a whole string value, never a piece of some other
 * string; a string value is told apart by not being followed by a colon. It does not know at what
 * depth the key sits: callers that care check that the key occurs once.
 */

/** A string literal's place: [start, end), quotes included; `escaped` when it holds a backslash escape. */
export interface StringLiteralSpan {
  start: number;
  end: number;
  escaped: boolean;
}

export type JsonText = string | Buffer;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

function codeAt(text: JsonText, at: number): number | undefined {
  return typeof text === 'string' ? (at < text.length ? text.charCodeAt(at) : undefined) : text[at];
}

function skipSpace(text: JsonText, from: number): number {
  let at = from;
  for (;;) {
    const code = codeAt(text, at);
    if (code !== 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) return at;
    at++;
  }
}

/**
 * The string value of the first `quotedKey` (e.g. '"model"') at or after `from` whose value is a
 * string; keys with other values (arrays, numbers, null) are passed over. Undefined when none.
 */
export function nextStringValue(text: JsonText, quotedKey: string, from = 0): StringLiteralSpan | undefined {
  let found = indexOf(text, quotedKey, from);
  while (found !== -1) {
    const afterKey = found + quotedKey.length;
    const span = stringValueAfterKey(text, afterKey);
    if (span) return span;
    found = indexOf(text, quotedKey, afterKey);
  }
  return undefined;
}

function indexOf(text: JsonText, needle: string, from: number): number {
  return text.indexOf(needle, from);
}

function stringValueAfterKey(text: JsonText, afterKey: number): StringLiteralSpan | undefined {
  let at = skipSpace(text, afterKey);
  if (codeAt(text, at) !== COLON) return undefined;
  at = skipSpace(text, at + 1);
  if (codeAt(text, at) !== QUOTE) return undefined;
  const start = at;
  let escaped = false;
  for (at = start + 1; ; at++) {
    const code = codeAt(text, at);
    if (code === undefined) return undefined;
    if (code === BACKSLASH) {
      escaped = true;
      at++;
    } else if (code === QUOTE) {
      return { start, end: at + 1, escaped };
    }
  }
}

/**
 * The text a string literal stands for. A literal without escapes is sliced out; one with escapes
 * (`\"`, `\\`, `\uXXXX`, …) is decoded by JSON.parse of that literal alone, which is native and
 * cheaper than decoding it here. A malformed literal (a bad escape) is returned as written,
 * between its quotes.
 */
export function stringLiteralText(text: string, span: StringLiteralSpan): string {
  if (!span.escaped) return text.slice(span.start + 1, span.end - 1);
  const literal = text.slice(span.start, span.end);
  try {
    return JSON.parse(literal) as string;
  } catch {
    return literal.slice(1, -1);
  }
}

/** Whether some `quotedKey` (e.g. '"usage"') in the text has an object as its value. */
export function hasObjectValue(text: string, quotedKey: string): boolean {
  let found = text.indexOf(quotedKey);
  while (found !== -1) {
    const afterKey = found + quotedKey.length;
    const colon = skipSpace(text, afterKey);
    if (codeAt(text, colon) === COLON && codeAt(text, skipSpace(text, colon + 1)) === 0x7b /* { */) return true;
    found = text.indexOf(quotedKey, afterKey);
  }
  return false;
}
