import type { GatewayError } from '../../errors/gateway-error.js';
import { extractErrorText, upstreamError } from '../http/upstream-error.js';

type Headers = Record<string, string | string[] | undefined>;

/** Anthropic error types and the HTTP status each is documented with (https://docs.anthropic.com/en/api/errors). */
const STATUS_BY_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

export function parseAnthropicError(status: number, body: unknown, headers: Headers): GatewayError {
  const { message, type } = extractErrorText(body);
  return upstreamError({ provider: 'anthropic', status, message, upstreamType: type, headers });
}

/** An `error` event inside a 200 stream, e.g. `overloaded_error` mid-answer. */
export function anthropicStreamError(error: { type?: string; message?: string } | undefined): GatewayError {
  const status = STATUS_BY_TYPE[error?.type ?? ''] ?? 500;
  return upstreamError({ provider: 'anthropic', status, message: error?.message, upstreamType: error?.type, headers: {} });
}
