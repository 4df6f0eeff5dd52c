import type { FastifyBaseLogger, FastifyError, FastifyInstance } from 'fastify';
import { GatewayError, isGatewayError, toOpenAIErrorBody } from '../errors/gateway-error.js';

/** The 413 for a request body over GW_BODY_LIMIT_BYTES. */
export function bodyTooLarge(): GatewayError {
  return new GatewayError('payload_too_large', 'The request body is larger than this gateway accepts (see GW_BODY_LIMIT_BYTES).');
}

/**
 * The one place errors become HTTP answers. Framework errors are mapped into the spec's
 * vocabulary: a wrong Content-Type is 400 (not 415), an over-size body 413, invalid JSON 400.
 * Anything unexpected is a 500 whose message is hidden and whose cause is logged.
 */
export function toGatewayError(error: unknown): GatewayError {
  if (isGatewayError(error)) return error;
  const fastifyError = error as Partial<FastifyError> & { type?: string };
  switch (fastifyError?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return bodyTooLarge();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError('invalid_request', 'Unsupported Content-Type: send the body as application/json (multipart/form-data for file uploads).');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('invalid_request', 'The request body is empty; send a JSON object.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new GatewayError('invalid_request', 'The request body is not valid JSON.');
    case 'FST_ERR_VALIDATION':
      return new GatewayError('invalid_request', fastifyError.message ?? 'Invalid request.');
    default:
      break;
  }
  if (error instanceof SyntaxError || fastifyError?.type === 'entity.parse.failed') {
    return new GatewayError('invalid_request', 'The request body is not valid JSON.');
  }
  if (fastifyError?.statusCode === 413) return new GatewayError('payload_too_large', 'The request body is too large.');
  if (fastifyError?.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new GatewayError('invalid_request', fastifyError.message ?? 'Invalid request.');
  }
  return new GatewayError('internal_error', 'An unexpected error occurred in the gateway; retry with backoff.', { cause: error });
}

/**
 * The error answer for a failed request, after logging what deserves it: the unexpected (with its
 * cause) and the gateway's own 5xx. Fastify's error handler and the direct JSON routes both use it.
 */
export function errorAnswer(error: unknown, log: FastifyBaseLogger): GatewayError {
  const gatewayError = toGatewayError(error);
  if (gatewayError.code === 'internal_error') log.error({ err: error }, 'unexpected error');
  else if (gatewayError.status >= 500) log.warn({ code: gatewayError.code, cause: gatewayError.cause }, gatewayError.message);
  return gatewayError;
}

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const gatewayError = errorAnswer(error, request.log);
    if (gatewayError.headers) reply.headers(gatewayError.headers);
    return reply.code(gatewayError.status).send(toOpenAIErrorBody(gatewayError));
  });
}
