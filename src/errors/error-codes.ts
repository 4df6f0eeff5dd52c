/**
 * The closed catalog of error codes gw answers with. Every GatewayError carries one of these, and
 * its HTTP status, OpenAI-style `type` and retryability are read from here, so they can never
 * disagree. The first five are the spec's gateway errors (SPEC "Errors → Gateway errors"); the rest
 * give a code to each of the spec's standard statuses. docs/errors.md renders this table.
 */
export const ERROR_CODES = {
  // Spec gateway errors (client classes GwGuardrailBlockedError, GwCreditError, GwRateLimitError, GwServiceError).
  guardrail_blocked: { httpStatus: 400, type: 'invalid_request_error', retryable: false },
  insufficient_credits: { httpStatus: 402, type: 'insufficient_credits', retryable: false },
  rate_limit_exceeded: { httpStatus: 429, type: 'rate_limit_error', retryable: true },
  tpm_limit_exceeded: { httpStatus: 429, type: 'rate_limit_error', retryable: true },
  credit_check_failed: { httpStatus: 503, type: 'service_unavailable', retryable: false },
  // Authentication and authorization.
  invalid_api_key: { httpStatus: 401, type: 'authentication_error', retryable: false },
  permission_denied: { httpStatus: 403, type: 'permission_error', retryable: false },
  // Bad input.
  invalid_request: { httpStatus: 400, type: 'invalid_request_error', retryable: false },
  missing_template_variable: { httpStatus: 400, type: 'invalid_request_error', retryable: false },
  unsupported_model: { httpStatus: 400, type: 'invalid_request_error', retryable: false },
  model_not_priced: { httpStatus: 400, type: 'invalid_request_error', retryable: false },
  context_length_exceeded: { httpStatus: 400, type: 'invalid_request_error', retryable: false },
  content_filtered: { httpStatus: 400, type: 'invalid_request_error', retryable: false },
  payload_too_large: { httpStatus: 413, type: 'invalid_request_error', retryable: false },
  not_found: { httpStatus: 404, type: 'invalid_request_error', retryable: false },
  model_not_found: { httpStatus: 404, type: 'invalid_request_error', retryable: false },
  unsupported_endpoint: { httpStatus: 404, type: 'invalid_request_error', retryable: false },
  conflict: { httpStatus: 409, type: 'invalid_request_error', retryable: false },
  // Upstream outcomes (SPEC "Standard statuses": 408, 502, 503, 504).
  upstream_request_timeout: { httpStatus: 408, type: 'timeout_error', retryable: true },
  upstream_rate_limited: { httpStatus: 429, type: 'rate_limit_error', retryable: true },
  upstream_bad_request: { httpStatus: 400, type: 'invalid_request_error', retryable: false },
  upstream_authentication: { httpStatus: 502, type: 'upstream_error', retryable: false },
  upstream_bad_response: { httpStatus: 502, type: 'upstream_error', retryable: true },
  upstream_unavailable: { httpStatus: 503, type: 'service_unavailable', retryable: true },
  upstream_timeout: { httpStatus: 504, type: 'timeout_error', retryable: true },
  // Our own failures.
  service_unavailable: { httpStatus: 503, type: 'service_unavailable', retryable: true },
  internal_error: { httpStatus: 500, type: 'internal_error', retryable: true },
} as const satisfies Record<string, { httpStatus: number; type: string; retryable: boolean }>;

export type ErrorCode = keyof typeof ERROR_CODES;
