import type { GatewayError } from '../../errors/gateway-error.js';
import { extractErrorText, upstreamError } from '../http/upstream-error.js';

type Headers = Record<string, string | string[] | undefined>;

/**
 * Google errors are `{error:{code,message,status,details}}` (https://ai.google.dev/gemini-api/docs/troubleshooting).
 * A 429 names its wait in a google.rpc.RetryInfo detail (`retryDelay: "30s"`) rather than a header.
 */
export function parseGeminiError(status: number, body: unknown, headers: Headers): GatewayError {
  const { message, type } = extractErrorText(body);
  const retryDelay = retryDelaySeconds(body);
  const withRetry = retryDelay !== undefined && headers['retry-after'] === undefined ? { ...headers, 'retry-after': String(retryDelay) } : headers;
  return upstreamError({ provider: 'gemini', status, message, upstreamType: type, headers: withRetry });
}

function retryDelaySeconds(body: unknown): number | undefined {
  const details = (body as { error?: { details?: unknown } } | undefined)?.error?.details;
  if (!Array.isArray(details)) return undefined;
  for (const detail of details) {
    const delay = (detail as { retryDelay?: unknown }).retryDelay;
    if (typeof delay === 'string') {
      const seconds = Number.parseFloat(delay);
      if (Number.isFinite(seconds)) return Math.ceil(seconds);
    }
  }
  return undefined;
}
