import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ZodError } from 'zod';
import { GatewayError, isGatewayError, toOpenAIErrorBody } from '../errors/gateway-error.js';
import { newRequestId } from '../lib/ids.js';

/** The 413 for a request body over GW_BODY_LIMIT_BYTES. */
export function bodyTooLarge(): GatewayError {
  return new GatewayError('payload_too_large', 'The request body is larger than this gateway accepts (see GW_BODY_LIMIT_BYTES).');
}

export const UNSUPPORTED_CONTENT_TYPE = 'Unsupported Content-Type: send the body as application/json (multipart/form-data for file uploads).';

/**
 * The longest path parameter (an id in /v1/videos/{id}, /api/admin/keys/{id}…) routed to its
 * handler: well above any id the gateway issues, and the most any route accepts (video ids).
 * A longer one is answered 404 before routing, as the unknown id it is (docs/errors.md).
 */
export const MAX_PATH_PARAMETER_LENGTH = 200;

/**
 * The one place errors become HTTP answers. Framework errors are mapped into the spec's
 * vocabulary: a wrong Content-Type is 400 (not 415), an over-size body 413, invalid JSON 400, a
 * route's rejected path or query 400. Anything unexpected is a 500 whose message is hidden and whose cause is logged.
 */
export function toGatewayError(error: unknown): GatewayError {
  if (isGatewayError(error)) return error;
  const fastifyError = error as Partial<FastifyError> & { type?: string };
  switch (fastifyError?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return bodyTooLarge();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError('invalid_request', UNSUPPORTED_CONTENT_TYPE);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError('invalid_request', 'The request body does not match its Content-Length.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('invalid_request', 'The request body is empty; send a JSON object.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new GatewayError('invalid_request', 'The request body is not valid JSON.');
    case 'FST_ERR_VALIDATION':
      return new GatewayError('invalid_request', fastifyError.message ?? 'Invalid request.');
    default:
      break;
  }
  if (error instanceof ZodError) {
    // A route's own parse of its path or query (bodies go through validate-body.ts): the client's input.
    const issue = error.issues[0];
    const path = issue?.path.map(String).join('.') ?? '';
    return new GatewayError('invalid_request', `Invalid value for '${path || 'request'}': ${issue?.message ?? 'invalid'}.`, { param: path || undefined });
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

/**
 * Fastify's `frameworkErrors`: the errors it meets before routing, which skip the hooks and the
 * error handler. A path whose %-escapes do not decode is a 400; a path parameter over
 * MAX_PATH_PARAMETER_LENGTH is answered as the unknown id it is (404). Both carry the x-gw-*
 * headers every answer has.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  let gatewayError: GatewayError;
  if (error.code === 'FST_ERR_BAD_URL') {
    gatewayError = new GatewayError('invalid_request', 'The request path is not valid: a %-escape in it does not decode to UTF-8 text.');
  } else if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    gatewayError = new GatewayError(
      'not_found',
      `Unknown resource: an id in the path is longer than any this gateway has (over ${MAX_PATH_PARAMETER_LENGTH} characters).`,
    );
  } else {
    gatewayError = errorAnswer(error, request.log);
  }
  reply.header('x-gw-request-id', request.id);
  reply.header('x-gw-latency-ms', reply.elapsedTime.toFixed(2));
  reply.code(gatewayError.status).send(toOpenAIErrorBody(gatewayError));
}

/** The status node:http gives each kind of unreadable request; the body is the gateway's. */
function clientErrorStatus(code: string | undefined): { status: number; reason: string; message: string } {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, reason: 'Request Timeout', message: 'The request did not arrive in time.' };
  }
  if (code === 'HPE_HEADER_OVERFLOW') {
    return { status: 431, reason: 'Request Header Fields Too Large', message: 'The request headers are larger than this gateway accepts.' };
  }
  return {
    status: 400,
    reason: 'Bad Request',
    message: 'The request could not be read as HTTP (for example, its body is longer than its Content-Length says).',
  };
}

/**
 * Fastify's `clientErrorHandler`: node:http could not parse what arrived on a connection (bytes
 * past a body's Content-Length read as a next request, a malformed header, a timeout). Nothing
 * more can be read from the connection, so the answer is written raw and the connection closed,
 * with the gateway's error body and headers rather than Fastify's. An answer already started on
 * the connection cannot be followed by another: then the connection is only closed.
 */
export function answerClientError(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  this.log.debug({ err: error }, 'unreadable request');
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const { status, reason, message } = clientErrorStatus(error.code);
    const body = JSON.stringify({ error: { message: `${message} The connection is closed.`, type: 'invalid_request_error', code: 'invalid_request', param: null } });
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\n` +
        'content-type: application/json; charset=utf-8\r\n' +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        `x-gw-request-id: ${newRequestId()}\r\n` +
        'x-gw-latency-ms: 0.00\r\n' +
        'connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy(error);
}
