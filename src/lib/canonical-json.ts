/**
 * Canonical JSON for signed bodies (SPEC "Events", webhook rule 6): keys sorted at every depth and
 * compact separators, byte-for-byte what Python's
 * `json.dumps(value, sort_keys=True, separators=(',', ':'))` produces for the same data, so receivers
 * written in either language can re-serialise and compare.
 *
 * Choices, made for that compatibility:
 * - Non-ASCII is escaped as `\uXXXX` (lowercase hex, UTF-16 code units, so astral characters become a
 *   surrogate pair), which is Python's default `ensure_ascii=True`. The output is therefore pure ASCII
 *   and its UTF-8 bytes equal its characters.
 * - Keys sort by Unicode code point, as Python compares `str`, not by UTF-16 code unit.
 * - Control characters use the short escapes `\b \f \n \r \t` and `\u00XX` otherwise; DEL (0x7f) is
 *   escaped too, as Python does.
 * - Values follow JSON.stringify: `toJSON()` is honoured (dates become ISO strings), `undefined` and
 *   functions are dropped from objects and become `null` in arrays, non-finite numbers become `null`.
 *   Numbers print as JavaScript prints them: integers match Python; a float that Python would print
 *   as `1.0` prints as `1` here, so money and counts should be integers (they are: nano-USD).
 */
export function canonicalJson(value: unknown): string {
  const text = serialise(value, new Set());
  return text === undefined ? 'null' : text;
}

function serialise(input: unknown, ancestors: Set<object>): string | undefined {
  const value = hasToJson(input) ? input.toJSON() : input;
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  const object = value as object;
  if (ancestors.has(object)) throw new TypeError('canonicalJson: circular structure');
  ancestors.add(object);
  try {
    if (Array.isArray(object)) {
      return `[${object.map((item) => serialise(item, ancestors) ?? 'null').join(',')}]`;
    }
    const record = object as Record<string, unknown>;
    const parts: string[] = [];
    for (const key of Object.keys(record).sort(compareCodePoints)) {
      const text = serialise(record[key], ancestors);
      if (text !== undefined) parts.push(`${quote(key)}:${text}`);
    }
    return `{${parts.join(',')}}`;
  } finally {
    ancestors.delete(object);
  }
}

function hasToJson(value: unknown): value is { toJSON(): unknown } {
  return typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

function quote(text: string): string {
  let output = '"';
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index];
    const code = text.charCodeAt(index);
    const short = SHORT_ESCAPES[character];
    if (short !== undefined) output += short;
    else if (code < 0x20 || code > 0x7e) output += `\\u${code.toString(16).padStart(4, '0')}`;
    else output += character;
  }
  return `${output}"`;
}

/** Orders strings by code point (Python's str order); plain `<` on JS strings compares UTF-16 units. */
function compareCodePoints(left: string, right: string): number {
  const leftPoints = Array.from(left, (character) => character.codePointAt(0) as number);
  const rightPoints = Array.from(right, (character) => character.codePointAt(0) as number);
  const length = Math.min(leftPoints.length, rightPoints.length);
  for (let index = 0; index < length; index += 1) {
    if (leftPoints[index] !== rightPoints[index]) return leftPoints[index] - rightPoints[index];
  }
  return leftPoints.length - rightPoints.length;
}
