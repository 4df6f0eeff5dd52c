import { nextStringValue } from '../../lib/json-text-scan.js';

const MODEL_KEY = '"model"';

/**
 * Where an OpenAI-shaped answer's `model` value sits in its text or bytes: found when `"model"`
 * occurs exactly once (so it is the top-level key an answer or chunk has) with a string value.
 */
export function soleModelValue(text: string | Buffer): { start: number; end: number } | undefined {
  const first = text.indexOf(MODEL_KEY);
  if (first === -1 || text.indexOf(MODEL_KEY, first + MODEL_KEY.length) !== -1) return undefined;
  return nextStringValue(text, MODEL_KEY, first);
}

/**
 * An answer's bytes with `model` set to the public id, the rest byte for byte as the upstream sent
 * it (one copy of the body, no re-encoding). Undefined when the value cannot be placed for sure
 * (no `model`, or `"model"` more than once): the caller then sends the parsed body re-encoded.
 */
export function bodyWithPublicModel(raw: Buffer, publicId: string): Buffer | undefined {
  const span = soleModelValue(raw);
  if (!span) return undefined;
  return Buffer.concat([raw.subarray(0, span.start), Buffer.from(JSON.stringify(publicId)), raw.subarray(span.end)]);
}

/** A character escape that could spell a letter of `model` (`\u006d` is `m`): a key written so is not found by its plain spelling. */
const ASCII_ESCAPE = '\\u00';

/**
 * A request body's JSON text with `model` set to `upstreamModel`, the rest as the client sent it;
 * undefined unless `model` surely is the one top-level key found: `"model"` occurs once, its value
 * is the very text of `publicModel` (the body's parsed `model`), and no escape in the text could
 * spell the key another way.
 */
export function requestTextWithModel(text: string, publicModel: string, upstreamModel: string): string | undefined {
  if (text.includes(ASCII_ESCAPE)) return undefined;
  const span = soleModelValue(text);
  if (!span) return undefined;
  const literal = JSON.stringify(publicModel);
  if (span.end - span.start !== literal.length || !text.startsWith(literal, span.start)) return undefined;
  if (upstreamModel === publicModel) return text;
  return text.slice(0, span.start) + JSON.stringify(upstreamModel) + text.slice(span.end);
}

/**
 * Rewrites the `model` of the chunks of one stream to the public id. A chunk that already names
 * it is returned as it is (the same string: nothing copied or re-encoded); otherwise the new value
 * is spliced into the text. Only a chunk where `"model"` occurs more than once is parsed (and
 * re-encoded if it names another model). Cost per chunk: two native substring searches and a
 * comparison.
 */
export function createChunkModelRewriter(publicId: string): (data: string) => string {
  const literal = JSON.stringify(publicId);
  return (data) => {
    const first = data.indexOf(MODEL_KEY);
    if (first === -1) return data;
    if (data.indexOf(MODEL_KEY, first + MODEL_KEY.length) !== -1) return reencodedWithModel(data, publicId);
    const span = nextStringValue(data, MODEL_KEY, first);
    if (!span || (span.end - span.start === literal.length && data.startsWith(literal, span.start))) return data;
    return data.slice(0, span.start) + literal + data.slice(span.end);
  };
}

function reencodedWithModel(data: string, publicId: string): string {
  try {
    const chunk = JSON.parse(data) as { model?: unknown };
    if (typeof chunk !== 'object' || chunk === null || typeof chunk.model !== 'string' || chunk.model === publicId) return data;
    return JSON.stringify({ ...chunk, model: publicId });
  } catch {
    // Not JSON: forwarded as it came, as any malformed chunk is.
    return data;
  }
}
