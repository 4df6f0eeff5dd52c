import { GatewayError, type GatewayErrorOptions } from '../../errors/gateway-error.js';

type Headers = Record<string, string | string[] | undefined>;

export interface UpstreamErrorInput {
  provider: string;
  status: number;
  /** The provider's own error text, already extracted from its error body. */
  message: string | undefined;
  /** The provider's own error type or code (e.g. `overloaded_error`, `RESOURCE_EXHAUSTED`, `context_length_exceeded`). */
  upstreamType?: string;
  headers: Headers;
}

// Wording upstreams use when the prompt does not fit; they answer 400 for it, which we make specific.
const CONTEXT_LENGTH_PATTERN =
  /context.length|context window|maximum context|too many tokens|prompt is too long|input is too long|exceeds the maximum number of tokens|token limit/i;
const CONTENT_FILTER_PATTERN = /content.filter|content.policy|content management policy|safety|responsible ai policy|blocked by/i;
// Credentials or endpoints an upstream might echo back ("Incorrect API key provided: sk-abc…"); never shown to clients.
const SECRET_PATTERNS = [
  /https?:\/\/[^\s"')]+/gi,
  /\bBearer\s+[^\s"]+/gi,
  /\b(?:sk|pk|rk|key|gsk|xai|AKIA|ASIA)[-_][A-Za-z0-9_-]{8,}/g,
  /\bAIza[0-9A-Za-z_-]{20,}/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  // Opaque keys with no telling prefix (Azure's 32 hex digits, Cohere's 40 characters): long runs mixing letters and digits.
  /\b(?=[A-Za-z0-9_-]*[0-9])(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{32,}\b/g,
];

/** Strips URLs and anything shaped like a credential from an upstream message, and bounds its length. */
export function sanitizeUpstreamMessage(message: string): string {
  let text = message;
  for (const pattern of SECRET_PATTERNS) text = text.replace(pattern, '[redacted]');
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

function headerValue(headers: Headers, name: string): string | undefined {
  const value = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** Retry-After is delta-seconds or an HTTP date (RFC 9110 §10.2.3); answers whole seconds. */
export function retryAfterSeconds(headers: Headers, nowMs: number = Date.now()): number | undefined {
  const value = headerValue(headers, 'retry-after');
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds));
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - nowMs) / 1000));
}

/**
 * The one mapping from an upstream failure to our catalog, shared by every provider adapter and the
 * video job backend, so the router's retry decisions (which read `retryable`) mean the same thing
 * for every provider. A 2xx whose body cannot be read is not an upstream error status: the caller
 * raises `upstream_bad_response` for it.
 */
export function upstreamError(input: UpstreamErrorInput): GatewayError {
  const { provider, status } = input;
  const quoted = input.message ? sanitizeUpstreamMessage(input.message) : undefined;
  const describe = (what: string) => (quoted ? `${what}: ${quoted}` : what);
  const details: Record<string, unknown> = { upstream_status: status };
  const options: GatewayErrorOptions = { provider, details };
  const overloaded = /overloaded/i.test(input.upstreamType ?? '');
  // The router waits this long before retrying any retryable failure (429, 503 with Retry-After).
  const retryAfter = retryAfterSeconds(input.headers);
  if (retryAfter !== undefined) details.retry_after_seconds = retryAfter;

  if (status === 429 && !overloaded) {
    if (retryAfter !== undefined) options.headers = { 'retry-after': String(retryAfter) };
    return new GatewayError('upstream_rate_limited', describe(`The ${provider} upstream rate-limited the request`), options);
  }
  if (status === 408) {
    return new GatewayError('upstream_request_timeout', describe(`The ${provider} upstream timed out the request`), options);
  }
  if (status === 504) {
    return new GatewayError('upstream_timeout', describe(`The ${provider} upstream did not answer in time`), options);
  }
  if (status >= 500 || overloaded) {
    return new GatewayError('upstream_unavailable', describe(`The ${provider} upstream is unavailable`), options);
  }
  if (status === 401 || status === 403) {
    // The upstream's text is not quoted: it is about the gateway's credential, which is none of the caller's business.
    return new GatewayError('upstream_authentication', `The ${provider} upstream rejected the gateway's credentials`, options);
  }
  if (status >= 400) {
    const text = `${input.upstreamType ?? ''} ${input.message ?? ''}`;
    if (CONTEXT_LENGTH_PATTERN.test(text)) {
      return new GatewayError('context_length_exceeded', describe('The request exceeds the model context length'), options);
    }
    if (CONTENT_FILTER_PATTERN.test(text)) {
      return new GatewayError('content_filtered', describe('The upstream content filter rejected the request'), options);
    }
    return new GatewayError('upstream_bad_request', describe(`The ${provider} upstream rejected the request`), options);
  }
  return new GatewayError('upstream_bad_response', describe(`The ${provider} upstream answered with status ${status}`), options);
}

/**
 * Reads `{error:{message,type,code|status}}`, `{message}`, `{error:"text"}` or a bare string, the
 * shapes upstreams use. `type` is the most specific of code, type and status (OpenAI puts
 * `context_length_exceeded` in `code` and the generic `invalid_request_error` in `type`).
 */
export function extractErrorText(body: unknown): { message?: string; type?: string } {
  if (typeof body === 'string') return { message: body || undefined };
  if (Buffer.isBuffer(body)) return { message: body.toString('utf8') || undefined };
  if (typeof body !== 'object' || body === null) return {};
  const record = body as Record<string, unknown>;
  const error = record.error;
  if (typeof error === 'string') return { message: error, type: stringOf(record.type) };
  if (typeof error === 'object' && error !== null) {
    const inner = error as Record<string, unknown>;
    const types = [inner.type, inner.status, inner.code].map(stringOf).filter((value) => value !== undefined);
    return { message: stringOf(inner.message), type: types.length > 0 ? [...new Set(types)].join(' ') : undefined };
  }
  return {
    message: stringOf(record.message) ?? stringOf(record.Message) ?? stringOf(record.detail),
    type: stringOf(record.type) ?? stringOf(record.__type) ?? stringOf(record.code),
  };
}

/** An OpenAI-shaped error answer (`{error:{message,type,code}}`), as the compatible family and the video backend get them. */
export function parseOpenAIError(provider: string, status: number, body: unknown, headers: Headers): GatewayError {
  const { message, type } = extractErrorText(body);
  return upstreamError({ provider, status, message, upstreamType: type, headers });
}

function stringOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return undefined;
}
