import { nanosToMicroUsd, parseUsdNanos } from './usd-amount.js';

/** The rate-limit headers of a response, when the gateway sent them. */
export interface GwRateLimitMeta {
  limitRequests?: number;
  remainingRequests?: number;
  resetRequests?: string;
  limitTokens?: number;
  remainingTokens?: number;
  resetTokens?: string;
  /** Seconds to wait, from Retry-After (delta-seconds or an HTTP date). */
  retryAfter?: number;
}

/**
 * What gw says about one call, read from its x-gw-* response headers. For a stream the cost
 * fields fill in when the final usage chunk (which carries `gw_cost_usd`) has been read.
 */
export interface GwResponseMeta {
  /** x-gw-request-id (falls back to x-request-id); null only when neither header came back. */
  requestId: string | null;
  /** x-gw-latency-ms: server-side latency. */
  latencyMs: number | null;
  /** x-gw-request-cost exactly as sent: a decimal USD string, never re-formatted. */
  costUsd?: string;
  /** The same cost as integer nano-USD (1e-9 USD), parsed from the decimal text without float math. */
  costNanoUsd?: number;
  /** The same cost as an exact decimal string of micro-USD (1e-6 USD), e.g. "123.456". */
  costMicroUsd?: string;
  /** x-gw-guardrails-applied: guardrails that ran before the call. */
  guardrailsApplied: string[];
  /** x-gw-post-call-guardrails: guardrails that ran on the answer. */
  postCallGuardrails: string[];
  /** x-gw-prompt-version: the prompt template version injected. */
  promptVersion?: number;
  /** x-gw-ab-test: the A/B variant selected. */
  abTest?: string;
  /** x-gw-stream-buffered: the stream was held back so post-call guardrails could run. */
  streamBuffered?: boolean;
  /** x-gw-cache. */
  cache?: 'hit' | 'miss';
  orgId?: string;
  keyAlias?: string;
  /** x-gw-route: how the gateway routed the call. */
  route?: string;
  rateLimit: GwRateLimitMeta;
  /** Every x-gw-* header as received, for headers this version does not know yet. */
  headers: Record<string, string>;
}

/** Builds the metadata of a response from its headers. */
export function readResponseMeta(headers: Headers): GwResponseMeta {
  const text = (name: string): string | undefined => headers.get(name) ?? undefined;
  const meta: GwResponseMeta = {
    requestId: text('x-gw-request-id') ?? text('x-request-id') ?? null,
    latencyMs: toNumber(text('x-gw-latency-ms')) ?? null,
    guardrailsApplied: toList(text('x-gw-guardrails-applied')),
    postCallGuardrails: toList(text('x-gw-post-call-guardrails')),
    rateLimit: readRateLimit(headers),
    headers: gwHeaders(headers),
  };
  setCost(meta, text('x-gw-request-cost'));
  const promptVersion = toNumber(text('x-gw-prompt-version'));
  if (promptVersion !== undefined) meta.promptVersion = promptVersion;
  const abTest = text('x-gw-ab-test');
  if (abTest) meta.abTest = abTest;
  const buffered = text('x-gw-stream-buffered');
  if (buffered !== undefined) meta.streamBuffered = buffered.trim().toLowerCase() === 'true';
  const cache = text('x-gw-cache')?.trim().toLowerCase();
  if (cache === 'hit' || cache === 'miss') meta.cache = cache;
  const orgId = text('x-gw-org-id');
  if (orgId) meta.orgId = orgId;
  const keyAlias = text('x-gw-key-alias');
  if (keyAlias) meta.keyAlias = keyAlias;
  const route = text('x-gw-route');
  if (route) meta.route = route;
  return meta;
}

/** Records a cost given as a decimal USD string on the metadata (header or stream usage chunk). */
export function setCost(meta: GwResponseMeta, costUsd: string | undefined): void {
  if (costUsd === undefined) return;
  const trimmed = costUsd.trim();
  const nanos = parseUsdNanos(trimmed);
  if (nanos === undefined) return;
  meta.costUsd = trimmed;
  meta.costNanoUsd = nanos;
  meta.costMicroUsd = nanosToMicroUsd(nanos);
}

/** Retry-After as whole seconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function readRetryAfter(headers: Headers, now: number = Date.now()): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value));
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

function readRateLimit(headers: Headers): GwRateLimitMeta {
  const rateLimit: GwRateLimitMeta = {};
  const numbers: Array<[keyof GwRateLimitMeta, string]> = [
    ['limitRequests', 'x-ratelimit-limit-requests'],
    ['remainingRequests', 'x-ratelimit-remaining-requests'],
    ['limitTokens', 'x-ratelimit-limit-tokens'],
    ['remainingTokens', 'x-ratelimit-remaining-tokens'],
  ];
  for (const [field, name] of numbers) {
    const value = toNumber(headers.get(name) ?? undefined);
    if (value !== undefined) (rateLimit as Record<string, number>)[field] = value;
  }
  const resetRequests = headers.get('x-ratelimit-reset-requests');
  if (resetRequests) rateLimit.resetRequests = resetRequests;
  const resetTokens = headers.get('x-ratelimit-reset-tokens');
  if (resetTokens) rateLimit.resetTokens = resetTokens;
  const retryAfter = readRetryAfter(headers);
  if (retryAfter !== undefined) rateLimit.retryAfter = retryAfter;
  return rateLimit;
}

function gwHeaders(headers: Headers): Record<string, string> {
  const found: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (name.toLowerCase().startsWith('x-gw-')) found[name.toLowerCase()] = value;
  });
  return found;
}

function toList(value: string | undefined): string[] {
  if (!value) return [];
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

function toNumber(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const number = Number(value);
  return Number.isFinite(number) ? number : undefined;
}
