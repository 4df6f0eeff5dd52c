import { GatewayError } from '../../errors/gateway-error.js';
import type { ErrorCode } from '../../errors/error-codes.js';

type HeaderMap = Record<string, string | string[] | undefined>;

/** Maps an OpenAI-style error answer (`{error:{message,type,code}}`) to our catalog, keeping the upstream status. */
export function parseOpenAIError(provider: string, status: number, body: unknown, headers: HeaderMap): GatewayError {
  const upstream = (body as { error?: { message?: unknown; code?: unknown; type?: unknown } } | undefined)?.error;
  const upstreamMessage = typeof upstream?.message === 'string' ? upstream.message : typeof body === 'string' ? body.slice(0, 500) : '';
  const upstreamCode = typeof upstream?.code === 'string' ? upstream.code : '';
  const details: Record<string, unknown> = { upstream_status: status };
  const retryAfter = retryAfterSeconds(headers['retry-after']);
  if (retryAfter !== undefined) details.retry_after_seconds = retryAfter;

  let code: ErrorCode;
  if (status === 408) code = 'upstream_request_timeout';
  else if (status === 429) code = 'upstream_rate_limited';
  else if (status === 401 || status === 403) code = 'upstream_authentication';
  else if (status === 404) code = 'upstream_bad_request';
  else if (status >= 500 && status !== 501) code = status === 504 ? 'upstream_timeout' : 'upstream_unavailable';
  else if (upstreamCode === 'context_length_exceeded' || /context length|maximum context/i.test(upstreamMessage)) code = 'context_length_exceeded';
  else if (upstreamCode === 'content_filter' || upstreamCode === 'content_policy_violation') code = 'content_filtered';
  else code = 'upstream_bad_request';

  const message = upstreamMessage
    ? `${provider} answered ${status}: ${redactSecrets(upstreamMessage)}`
    : `${provider} answered ${status}.`;
  return new GatewayError(code, message, { provider, details });
}

export function retryAfterSeconds(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  const seconds = Number(text);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(text);
  if (Number.isFinite(date)) return Math.max(0, Math.ceil((date - Date.now()) / 1000));
  return undefined;
}

/** Upstreams sometimes echo a key prefix ("Incorrect API key provided: sk-abc…"); never pass one on. */
export function redactSecrets(text: string): string {
  return text.replace(/\b(sk|pk|rk|key|gsk|xai|AIza)[-_A-Za-z0-9]{8,}/g, '[redacted]').replace(/https?:\/\/[^\s"']+/g, '[url]');
}
