import type { GatewayError } from '../../errors/gateway-error.js';
import { extractErrorText, upstreamError } from '../http/upstream-error.js';

type Headers = Record<string, string | string[] | undefined>;

/**
 * Cohere errors are `{"message": "..."}` (https://docs.cohere.com/reference/errors); it also uses
 * 498 for an invalid token and 499 for a cancelled request.
 */
export function parseCohereError(status: number, body: unknown, headers: Headers): GatewayError {
  const { message, type } = extractErrorText(body);
  const effectiveStatus = status === 498 ? 401 : status === 499 ? 408 : status;
  const error = upstreamError({ provider: 'cohere', status: effectiveStatus, message, upstreamType: type, headers });
  if (error.details) error.details.upstream_status = status;
  return error;
}
