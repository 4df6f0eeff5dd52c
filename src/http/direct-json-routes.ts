import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import { GatewayError, toOpenAIErrorBody } from '../errors/gateway-error.js';
import { newRequestId } from '../lib/ids.js';
import type { AnswerStream } from './answer-stream.js';
import { installHttpEdge, type HttpEdge } from './edge/http-edge.js';
import { isJsonContentType } from './edge/request-head.js';
import { bodyTooLarge, errorAnswer } from './error-handler.js';
import type { InferenceHandler, InferenceReply, InferenceRequest } from './inference-handler.js';
import { parseJsonBody } from './json-body.js';

export interface DirectJsonRoutesOptions {
  /** Inference handlers by exact path (from registerInferenceRoutes: the JSON operations only). */
  handlers: ReadonlyMap<string, InferenceHandler>;
  bodyLimitBytes: number;
  logger: FastifyBaseLogger;
  /** While the gateway shuts down every request goes to Fastify, which refuses it with a 503. */
  isClosing(): boolean;
  /**
   * Whether gw's HTTP edge (edge/http-edge.ts) reads the server's connections and answers these
   * calls itself, ahead of node:http (GW_HTTP_EDGE=gw, the default), or node:http parses every
   * request and this module serves them from its 'request' event (GW_HTTP_EDGE=node).
   */
  edge: boolean;
}

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * Serves the inference calls that make up nearly all of a gateway's traffic (POST, JSON body, an
 * inference path with no query string) straight from node:http, ahead of Fastify, through the
 * same handlers Fastify would run. Everything else goes to Fastify as before: uploads, other
 * content types, query strings, the management API, the dashboard, unknown paths, shutdown.
 *
 * Why: Fastify's work per request (its request and reply objects, hook runner, router, content-type
 * parser and body reader, serializer) was about an eighth of the gateway's CPU per call
 * (docs/pipeline.md, "Two ways into the HTTP edge", has the measurement). What Fastify does
 * for these routes is done here the same way, and the e2e tests run every inference call through
 * this path: the request id and latency headers, the body limit (413, connection closed), an empty
 * or invalid body (400), the error body and its logging (error-handler.ts).
 */
export function serveJsonRoutesDirectly(server: Server, options: DirectJsonRoutesOptions): HttpEdge | undefined {
  const listeners = server.listeners('request') as RequestListener[];
  if (listeners.length !== 1) throw new Error(`expected Fastify's one request listener on the server, found ${listeners.length}`);
  const framework = listeners[0]!;
  server.removeListener('request', framework);
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const handler = request.method === 'POST' ? options.handlers.get(request.url!) : undefined;
    if (handler === undefined || !isJsonContentType(request.headers['content-type']) || options.isClosing()) {
      framework(request, response);
      return;
    }
    serve(handler, request, response, options);
  });
  if (!options.edge) return undefined;
  return installHttpEdge(server, {
    bodyLimitBytes: options.bodyLimitBytes,
    servesPath: (path) => options.handlers.has(path),
    isClosing: options.isClosing,
    serve: (request, body, answer, startedAt) => {
      const reply = new DirectReply(answer, options.logger, newRequestId(), startedAt);
      runOnJsonText(options.handlers.get(request.path)!, reply, request.headers, body);
    },
  });
}

function runHandler(handler: InferenceHandler, reply: DirectReply, headers: IncomingHttpHeaders, body: unknown): void {
  const exchange: InferenceRequest = { id: reply.requestId, body, headers };
  handler(exchange, reply).catch((error: unknown) => reply.fail(error));
}

/** Runs the handler on a body read whole; a body that is not JSON is the 400 parseJsonBody says. */
function runOnJsonText(handler: InferenceHandler, reply: DirectReply, headers: IncomingHttpHeaders, text: string): void {
  let body: unknown;
  try {
    body = parseJsonBody(text);
  } catch (error) {
    reply.fail(error);
    return;
  }
  runHandler(handler, reply, headers, body);
}

function serve(handler: InferenceHandler, request: IncomingMessage, response: ServerResponse, options: DirectJsonRoutesOptions): void {
  const reply = new DirectReply(response, options.logger, newRequestId(), performance.now());
  const { headers } = request;
  const declaredLength = headers['content-length'];
  if (declaredLength === undefined && headers['transfer-encoding'] === undefined) {
    // As in Fastify: a request that declares no body has none to parse; validation answers it.
    runHandler(handler, reply, headers, undefined);
    return;
  }
  const limit = options.bodyLimitBytes;
  if (declaredLength !== undefined && Number(declaredLength) > limit) {
    // The client may still be sending: the connection closes after the answer instead of reading it all.
    reply.fail(bodyTooLarge(), { closeConnection: true });
    return;
  }
  const chunks: Buffer[] = [];
  let received = 0;
  const stopReading = () => {
    request.off('data', onData);
    request.off('end', onEnd);
    request.off('error', onError);
  };
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received > limit) {
      stopReading();
      reply.fail(bodyTooLarge(), { closeConnection: true });
      return;
    }
    chunks.push(chunk);
  };
  const onEnd = () => {
    stopReading();
    runOnJsonText(handler, reply, headers, chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, received).toString('utf8'));
  };
  const onError = () => {
    stopReading();
    reply.fail(new GatewayError('invalid_request', 'The request body ended before it was complete.'), { closeConnection: true });
  };
  request.on('data', onData);
  request.on('end', onEnd);
  request.on('error', onError);
}

/** The answer of one direct call: the headers gathered, then one writeHead and end (or the handler's own writes once hijacked). */
class DirectReply implements InferenceReply {
  private statusCode = 200;
  private hijacked = false;
  /** x-gw-request-id first, as Fastify's onRequest hook puts it on every answer (build-server.ts). */
  private readonly pending: Record<string, string | number>;
  private requestLog: FastifyBaseLogger | undefined;

  constructor(
    readonly raw: AnswerStream,
    private readonly logger: FastifyBaseLogger,
    readonly requestId: string,
    private readonly startedAt: number,
  ) {
    this.pending = { 'x-gw-request-id': requestId };
  }

  /** Made on first use: most calls never log, and a child logger costs an object per call. */
  get log(): FastifyBaseLogger {
    return (this.requestLog ??= this.logger.child({ request_id: this.requestId }));
  }

  hijack(): void {
    this.hijacked = true;
  }

  header(name: string, value: string): this {
    this.pending[name.toLowerCase()] = value;
    return this;
  }

  headers(values: Record<string, string>): this {
    for (const name in values) this.header(name, values[name]!);
    return this;
  }

  send(payload: unknown): void {
    const bytes = Buffer.isBuffer(payload);
    const body = bytes ? payload : JSON.stringify(payload);
    this.pending['content-type'] ??= bytes ? 'application/octet-stream' : 'application/json; charset=utf-8';
    this.pending['content-length'] = Buffer.byteLength(body);
    this.pending['x-gw-latency-ms'] ??= (performance.now() - this.startedAt).toFixed(2);
    this.raw.writeHead(this.statusCode, this.pending);
    this.raw.end(body);
  }

  /** The error answer (error-handler.ts), unless the handler already answered: then the connection is cut. */
  fail(error: unknown, { closeConnection = false } = {}): void {
    if (this.hijacked || this.raw.headersSent) {
      this.log.error({ err: error }, 'request failed after its answer started');
      if (!this.raw.writableEnded) this.raw.destroy();
      return;
    }
    const answer = errorAnswer(error, this.log);
    if (answer.headers) this.headers(answer.headers);
    if (closeConnection) this.pending.connection = 'close';
    this.statusCode = answer.status;
    this.send(toOpenAIErrorBody(answer));
  }
}
