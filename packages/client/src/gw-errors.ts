import { APIError, BadRequestError, InternalServerError, RateLimitError } from 'openai';
import { readRetryAfter } from './response-meta.js';

/**
 * The gateway's own errors (SPEC "Errors → Gateway errors"). Each extends the `openai` SDK class
 * the SDK itself would have thrown for that status, so `catch (e) { if (e instanceof
 * RateLimitError) … }` written for the SDK keeps working, and `e instanceof GwRateLimitError`
 * narrows further. status, code, type, param, message and requestID are the SDK's fields.
 */

/** The body's `error` object: `{ message, type, code, param }` plus extra keys such as guardrail_name. */
export interface GwErrorBody {
  message?: string;
  type?: string;
  code?: string | null;
  param?: string | null;
  [extra: string]: unknown;
}

/** 400 guardrail_blocked: a guardrail blocked the request. */
export class GwGuardrailBlockedError extends BadRequestError {
  /** The guardrail that blocked, when the body names it (error.guardrail_name). */
  readonly guardrailName: string | undefined;
  /** The blocking guardrail's id, when the body gives it (error.guardrail_id). */
  readonly guardrailId: string | undefined;

  constructor(status: 400, error: GwErrorBody | undefined, message: string | undefined, headers: Headers) {
    super(status, error, message, headers);
    this.name = 'GwGuardrailBlockedError';
    const name = error?.['guardrail_name'];
    this.guardrailName = typeof name === 'string' ? name : undefined;
    const id = error?.['guardrail_id'];
    this.guardrailId = typeof id === 'string' ? id : undefined;
  }
}

/** 402 insufficient_credits: the key would exceed its credit balance or budget; nothing was debited. */
export class GwCreditError extends APIError<402, Headers> {
  constructor(status: 402, error: GwErrorBody | undefined, message: string | undefined, headers: Headers) {
    super(status, error, message, headers);
    this.name = 'GwCreditError';
  }
}

/** 429 rate_limit_exceeded (RPM) or tpm_limit_exceeded (TPM). */
export class GwRateLimitError extends RateLimitError {
  /** Seconds to wait before retrying, from the Retry-After header. */
  readonly retryAfter: number | undefined;

  constructor(status: 429, error: GwErrorBody | undefined, message: string | undefined, headers: Headers) {
    super(status, error, message, headers);
    this.name = 'GwRateLimitError';
    this.retryAfter = readRetryAfter(headers);
  }
}

/** 503 credit_check_failed: the credit system is unavailable, so the call was refused rather than run unmetered. */
export class GwServiceError extends InternalServerError {
  constructor(status: number, error: GwErrorBody | undefined, message: string | undefined, headers: Headers) {
    super(status, error, message, headers);
    this.name = 'GwServiceError';
  }
}

/**
 * The error for a non-2xx response: a Gw class for the gateway's own codes, otherwise the SDK's
 * class for the status. The request id is copied from x-gw-request-id into x-request-id when only
 * the former came back, so the SDK's `requestID` field is set on every error.
 */
export function makeGwStatusError(status: number, body: unknown, message: string | undefined, headers: Headers): APIError {
  const withRequestId = withSdkRequestId(headers);
  const error = errorObject(body);
  const code = typeof error?.code === 'string' ? error.code : undefined;
  if (status === 400 && code === 'guardrail_blocked') return new GwGuardrailBlockedError(400, error, message, withRequestId);
  if (status === 402 && code === 'insufficient_credits') return new GwCreditError(402, error, message, withRequestId);
  if (status === 429 && (code === 'rate_limit_exceeded' || code === 'tpm_limit_exceeded')) {
    return new GwRateLimitError(429, error, message, withRequestId);
  }
  if (status === 503 && code === 'credit_check_failed') return new GwServiceError(503, error, message, withRequestId);
  return APIError.generate(status, body as object | undefined, message, withRequestId);
}

/** The status each gateway code is answered with, for errors that arrive inside a stream (no HTTP status). */
const GATEWAY_CODE_STATUS: Readonly<Record<string, number>> = {
  guardrail_blocked: 400,
  insufficient_credits: 402,
  rate_limit_exceeded: 429,
  tpm_limit_exceeded: 429,
  credit_check_failed: 503,
};

/**
 * An error event inside a stream (`data: {"error":…}`, e.g. a post-call guardrail blocking a
 * buffered stream) reaches the SDK after the 200 status, so the SDK throws a bare APIError without
 * status. A gateway code there is turned into its Gw class with the code's status; anything else
 * is returned unchanged.
 */
export function gwStreamError(error: unknown): unknown {
  if (!(error instanceof APIError) || error.status !== undefined) return error;
  const code = typeof error.code === 'string' ? error.code : undefined;
  const status = code === undefined ? undefined : GATEWAY_CODE_STATUS[code];
  if (status === undefined) return error;
  return makeGwStatusError(status, { error: error.error }, undefined, error.headers ?? new Headers());
}

function errorObject(body: unknown): GwErrorBody | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const error = (body as { error?: unknown }).error;
  return error && typeof error === 'object' ? (error as GwErrorBody) : undefined;
}

function withSdkRequestId(headers: Headers): Headers {
  const gwRequestId = headers.get('x-gw-request-id');
  if (!gwRequestId || headers.get('x-request-id')) return headers;
  const copy = new Headers(headers);
  copy.set('x-request-id', gwRequestId);
  return copy;
}
