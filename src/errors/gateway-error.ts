import { ERROR_CODES, type ErrorCode } from './error-codes.js';
import type { Usage } from '../protocol/usage.js';

/** What an upstream answered before gw refused to pass the answer on: the meter charges it (docs/money.md). */
export interface UpstreamAnswer {
  /** The usage the upstream reported, if it reported any. */
  usage?: Usage;
  /** The text it produced (content, refusals, function-call arguments), counted when it reported no usage. */
  producedText: string;
}

export interface GatewayErrorOptions {
  /** The request field at fault, as OpenAI reports it in `error.param`. */
  param?: string;
  /** Provider id when the error came from an upstream. */
  provider?: string;
  /** Safe, structured context (upstream status, guardrail name, retry-after seconds…). Serialised to clients. */
  details?: Record<string, unknown>;
  /** Extra response headers (e.g. Retry-After). */
  headers?: Record<string, string>;
  /** The underlying error: logged, never serialised. */
  cause?: unknown;
  /** Set when the upstream had already answered (a post-call guardrail refused the answer): the call is charged. */
  upstreamAnswer?: UpstreamAnswer;
}

/** The one error class of gw. Its status, type and retryability come from the catalog. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly param: string | undefined;
  readonly provider: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;
  readonly upstreamAnswer: UpstreamAnswer | undefined;

  constructor(code: ErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.param = options.param;
    this.provider = options.provider;
    this.details = options.details;
    this.headers = options.headers;
    this.upstreamAnswer = options.upstreamAnswer;
  }

  get status(): number {
    return ERROR_CODES[this.code].httpStatus;
  }

  get type(): string {
    return ERROR_CODES[this.code].type;
  }

  get retryable(): boolean {
    return ERROR_CODES[this.code].retryable;
  }
}

export function isGatewayError(value: unknown): value is GatewayError {
  return value instanceof GatewayError;
}

export interface OpenAIErrorBody {
  error: { message: string; type: string; code: string; param: string | null; [extra: string]: unknown };
}

/** Renders any thrown value as the spec's error body. Non-gateway errors never leak their message. */
export function toOpenAIErrorBody(error: unknown): OpenAIErrorBody {
  const gatewayError = isGatewayError(error)
    ? error
    : new GatewayError('internal_error', 'An unexpected error occurred in the gateway; retry with backoff.');
  const body: OpenAIErrorBody = {
    error: {
      message: gatewayError.message,
      type: gatewayError.type,
      code: gatewayError.code,
      param: gatewayError.param ?? null,
    },
  };
  if (gatewayError.details) Object.assign(body.error, gatewayError.details);
  return body;
}

/** Shorthand for the most common 400. */
export function invalidRequest(message: string, param?: string): GatewayError {
  return new GatewayError('invalid_request', message, { param });
}
