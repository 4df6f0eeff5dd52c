import type {} from '@fastify/swagger';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import { GatewayError, toOpenAIErrorBody } from '../errors/gateway-error.js';
import { newRequestId } from '../lib/ids.js';
import { answerClientError, answerFrameworkError, installErrorHandler, MAX_PATH_PARAMETER_LENGTH, UNSUPPORTED_CONTENT_TYPE } from './error-handler.js';
import { parseJsonBody } from './json-body.js';
import { multipartLimits, PendingMultipart } from './multipart-body.js';

export interface ServerOptions {
  bodyLimitBytes: number;
  fileLimitBytes: number;
  logLevel: string;
  version: string;
}

/** Whether a route's schema declares it consumes multipart/form-data (the upload endpoints do, for the OpenAPI document). */
function takesMultipart(schema: { consumes?: unknown } | undefined): boolean {
  return Array.isArray(schema?.consumes) && schema.consumes.includes('multipart/form-data');
}

const UNSUPPORTED_AREAS = [
  'files',
  'fine_tuning',
  'fine-tunes',
  'batches',
  'assistants',
  'threads',
  'vector_stores',
  'uploads',
  'containers',
  'conversations',
  'responses',
  'realtime',
  'evals',
];

/**
 * The Fastify instance with the gateway's HTTP conventions: request ids and latency on every
 * answer, strict JSON, the spec's error body for everything (unknown paths included), and the
 * OpenAPI document. Routes are registered by app.ts.
 */
export async function buildServer(options: ServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    bodyLimit: options.bodyLimitBytes,
    logger: { level: options.logLevel, redact: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]'] },
    genReqId: () => newRequestId(),
    // Per-request access lines would cost more than the rest of the hot path; the request log records each call.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    return503OnClosing: true,
    forceCloseConnections: false,
    keepAliveTimeout: 72_000,
    // Ids up to this length reach their routes, so a long unknown id gets that resource's own 404
    // after authentication; longer ones are answered 404 by answerFrameworkError.
    routerOptions: { maxParamLength: MAX_PATH_PARAMETER_LENGTH },
    // A path that does not decode, or an over-long path parameter, in the gateway's error body.
    frameworkErrors: answerFrameworkError,
    // A request node:http cannot read (e.g. a Content-Length its body does not match): a raw answer in the error body.
    clientErrorHandler: answerClientError,
  });

  // Validation is zod's, in the handlers, so there is one error format; route schemas document only.
  app.setValidatorCompiler(() => () => true);

  // Callback-style hooks: an async hook costs every request a promise and a microtask turn in Fastify's hook runner.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-gw-request-id', request.id);
    done();
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (!reply.hasHeader('x-gw-latency-ms')) {
      reply.header('x-gw-latency-ms', reply.elapsedTime.toFixed(2));
    }
    done(null, payload);
  });

  // `application/json; charset=utf-8` is JSON too; anything else on a JSON route is a 400 (not 415).
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as GatewayError, undefined);
    }
  });

  // Uploads (image edits, transcriptions) are read by their handlers (multipart-body.ts), whose
  // parser is loaded on the first upload instead of in every gateway. Only routes that declare
  // they consume multipart/form-data (the schema that documents them) take it: any other route
  // answers it as it answers text/plain, instead of validating a body it never reads.
  const uploadLimits = multipartLimits(options.fileLimitBytes);
  app.addContentTypeParser('multipart/form-data', (request, payload, done) => {
    if (!request.is404 && !takesMultipart(request.routeOptions.schema)) {
      done(new GatewayError('invalid_request', UNSUPPORTED_CONTENT_TYPE), undefined);
      return;
    }
    done(null, new PendingMultipart(payload, request.headers, uploadLimits));
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'gw gateway API',
        version: '1.0.0',
        description: 'OpenAI-compatible gateway: inference endpoints under /v1, management under /api and /gw.',
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'sk-gw-…' } } },
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  installErrorHandler(app);
  app.setNotFoundHandler((request, reply) => {
    const segment = request.url.split('?')[0].split('/')[2] ?? '';
    const error = UNSUPPORTED_AREAS.includes(segment)
      ? new GatewayError(
          'unsupported_endpoint',
          `The ${segment} API is not supported by this gateway. Use /v1/chat/completions instead.`,
        )
      : new GatewayError('not_found', `Unknown endpoint: ${request.method} ${request.url.split('?')[0]}.`);
    reply.code(error.status).send(toOpenAIErrorBody(error));
  });
  return app;
}
