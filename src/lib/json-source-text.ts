/**
 * The JSON text a request body was parsed from, kept beside the parsed object (weakly: it goes
 * when the object goes). An adapter that forwards a body unchanged but for one value
 * (providers/compatible/compatible-adapter.ts: the upstream's model name) splices that value into
 * the client's text instead of encoding the whole object again: no copy of the body object, no
 * JSON.stringify on the call's path.
 *
 * Sound only while the object is not changed in place, which the pipeline never does: a stage
 * that changes a request (a template, an A/B variant, a redaction, a fallback model, gw_* fields
 * stripped) makes a new object, which has no text here. A stage that vouches for what the model
 * is sent (the pre-call guardrails) forgets the text, so the upstream gets the body the stage saw.
 */
const sourceTexts = new WeakMap<object, string>();

/** Keeps `text` as the source of `body` (plain objects only: what a request body is). */
export function rememberJsonText(body: unknown, text: string): void {
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) sourceTexts.set(body, text);
}

/** The text `body` was parsed from, if it is known and the object is as parsed. */
export function jsonTextOf(body: object): string | undefined {
  return sourceTexts.get(body);
}

/** From now on `body` is encoded anew wherever it is forwarded. */
export function forgetJsonText(body: object): void {
  sourceTexts.delete(body);
}
