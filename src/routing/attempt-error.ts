import { GatewayError, isGatewayError } from '../errors/gateway-error.js';
import type { Deployment, FallbackReason } from './catalog-types.js';

/** Which of the router's own timers ended an attempt. */
export type AttemptTimeout = 'first_byte' | 'total';

// Node and undici error codes (undici docs "Errors"; Node "Common system errors").
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * Every failure of one attempt as a GatewayError (the status table in docs/routing.md):
 * our timer fired → upstream_timeout (504); a connection failure → upstream_unavailable (503) or
 * upstream_timeout; anything else unexpected (unparsable body, a translator tripping on an odd
 * shape) → upstream_bad_response (502). GatewayErrors from the provider pass unchanged.
 */
export function toAttemptError(error: unknown, deployment: Deployment, timedOut: AttemptTimeout | null): GatewayError {
  if (timedOut) {
    return new GatewayError(
      'upstream_timeout',
      timedOut === 'first_byte'
        ? 'The provider did not start answering in time.'
        : 'The provider did not finish answering in time.',
      { provider: deployment.provider, cause: error },
    );
  }
  if (isGatewayError(error)) return error;
  const code = networkCode(error);
  if (code && TIMEOUT_CODES.has(code)) {
    return new GatewayError('upstream_timeout', 'The provider did not respond in time.', { provider: deployment.provider, cause: error });
  }
  if (code && UNAVAILABLE_CODES.has(code)) {
    return new GatewayError('upstream_unavailable', 'The provider is temporarily unavailable.', {
      provider: deployment.provider,
      cause: error,
    });
  }
  return new GatewayError('upstream_bad_response', 'The provider returned an invalid response.', {
    provider: deployment.provider,
    cause: error,
  });
}

function networkCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 4; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A failure that says something about the deployment (moves to the next one; retried when retryable). */
export function isDeploymentFault(error: GatewayError): boolean {
  return error.retryable || error.code === 'upstream_authentication';
}

/**
 * A deployment fault that counts against its circuit. A 429 does not: the provider answered, so it
 * is up, and the answer asks for backoff, which retries, Retry-After and fallbacks already give;
 * opening the circuit would turn a quota limit into an outage for every caller. Client-caused 4xx
 * are not deployment faults at all.
 */
export function countsAgainstCircuit(error: GatewayError): boolean {
  return isDeploymentFault(error) && error.code !== 'upstream_rate_limited';
}

/** Does a fallback rule listing `reasons` apply to this final error of a model? */
export function fallbackApplies(error: GatewayError, reasons: readonly FallbackReason[]): boolean {
  return reasons.some((reason) => {
    switch (reason) {
      case 'any':
        return true;
      case 'rate_limited':
        return error.code === 'upstream_rate_limited';
      case 'context_window':
        return error.code === 'context_length_exceeded';
      case 'content_filtered':
        return error.code === 'content_filtered';
      default:
        return false;
    }
  });
}
