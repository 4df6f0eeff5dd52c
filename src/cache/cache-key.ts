import { createHash } from 'node:crypto';

/**
 * Fields that do not change the answer: transport (stream, stream_options), attribution (user,
 * metadata, store) and gw_* controls (gw_guardrail_ids included: post-call guardrails run outside the
 * cache, on every answer a caller receives, so the stored answer does not depend on them). Everything
 * else, including fields we do not know, is part of the key: a parameter we have never heard of may
 * well change the answer, so it must not be ignored.
 */
const NOT_ANSWER_AFFECTING = new Set(['model', 'stream', 'stream_options', 'user', 'metadata', 'store']);

export interface CacheKeyInput {
  orgId: string;
  operation: string;
  /** The public model id the call resolved to (after templates and A/B tests). */
  model: string;
  /** The request after template rendering and guardrail redaction. */
  request: Record<string, unknown>;
}

/** SHA-256 over canonical JSON of org, operation, model and the answer-affecting parameters. */
export function cacheKey(input: CacheKeyInput): string {
  const parameters: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(input.request)) {
    // null and absent mean the same thing (the default) for every top-level parameter.
    if (value === null || value === undefined || NOT_ANSWER_AFFECTING.has(field) || field.startsWith('gw_')) continue;
    parameters[field] = value;
  }
  const canonical = canonicalJson({ org: input.orgId, operation: input.operation, model: input.model, parameters });
  return createHash('sha256').update(canonical).digest('hex');
}

/** JSON with object keys sorted at every depth and undefined members dropped (RFC 8785 in spirit). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  const members = Object.keys(value)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${members.join(',')}}`;
}
