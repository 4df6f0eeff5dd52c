import type { IncomingHttpHeaders } from 'node:http';
import type { AnswerStream } from './answer-stream.js';
import type { FastifyBaseLogger } from 'fastify';
import type { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.js';
import type { KeyAuthenticator } from '../keys/key-authenticator.js';
import { isPromise } from '../lib/awaitable.js';
import { CallAbort } from '../lib/call-signal.js';
import type { Operation } from '../protocol/endpoints.js';
import { usageTotals } from '../protocol/usage.js';
import type { CallRecord, GatewayCall, Next, Outcome, UploadedFile } from '../pipeline/stage.js';
import type { RequestRecorder } from '../observability/request-recorder.js';
import type { AuthContext } from '../tenancy/tenancy-types.js';
import { bearerToken } from './bearer-token.js';
import { publishCallStep } from '../observability/call-steps.js';
import { writeSseStream } from './sse-writer.js';
import { validateBody } from './validate-body.js';
import { checkModelAccess, type ModelDirectory } from './model-access.js';
import { PendingMultipart } from './multipart-body.js';

export interface InferenceRouteOptions {
  operation: Operation;
  /** Validates the JSON body, or the text fields of a multipart body. */
  schema: z.ZodType;
  /**
   * A cheaper check that may only accept bodies `schema` accepts unchanged (protocol/chat-quick-check.ts);
   * a JSON body it accepts is used as sent, anything else goes through `schema`.
   */
  quickCheck?: (body: unknown) => boolean;
  pipeline: Next;
  /** Reads the files and fields of a multipart request. */
  readMultipart?: (request: InferenceRequest) => Promise<{ fields: Record<string, unknown>; files: Record<string, UploadedFile> }>;
  /** The route takes JSON too (videos: the OpenAI SDK sends a form, curl users JSON); `readMultipart` reads only forms. */
  alsoJson?: boolean;
  /** Model used when the request names none (moderations, image edits). */
  defaultModel?: () => string | undefined;
  /** Add x-gw-org-id and x-gw-key-alias (the spec lists them on chat completions). */
  identityHeaders: boolean;
}

export interface InferenceDependencies {
  keys: KeyAuthenticator;
  models: ModelDirectory;
  recorder: RequestRecorder;
  /** Record request and response text in the request log for every org (orgs can also opt in themselves). */
  logMessageContents: boolean;
  /** Tracks in-flight calls for graceful shutdown. */
  inflight: { add(): void; done(): void };
}

/**
 * What the handler reads of a request. Fastify's request has it, and so does the one the direct
 * JSON routes make (direct-json-routes.ts).
 */
export interface InferenceRequest {
  readonly id: string;
  readonly body: unknown;
  readonly headers: IncomingHttpHeaders;
}

/** What the handler does with its answer: the part of Fastify's reply it uses, which the direct JSON routes implement too. */
export interface InferenceReply {
  readonly raw: AnswerStream;
  readonly log: FastifyBaseLogger;
  /** The handler writes to `raw` itself from here on (streams). */
  hijack(): void;
  header(name: string, value: string): unknown;
  headers(values: Record<string, string>): unknown;
  /** A Buffer as it is (content-type set before), anything else as JSON. */
  send(payload: unknown): unknown;
}

export type InferenceHandler = (request: InferenceRequest, reply: InferenceReply) => Promise<void>;

/**
 * The HTTP edge of every inference endpoint: authenticate, validate, check model access, run the
 * operation's pipeline, write the outcome (JSON, binary or SSE), and record the request.
 */
export function createInferenceHandler(options: InferenceRouteOptions, dependencies: InferenceDependencies): InferenceHandler {
  const { operation, schema, pipeline } = options;

  return async function handleInference(request, reply) {
    const startedAt = performance.now();
    let record: CallRecord = { headers: {} };
    let auth: AuthContext | undefined;
    let model: string | undefined;
    let stream = false;
    let user: string | undefined;
    // With content logging on: the client's body and the answer's text, logged once the call ends.
    let loggedBody: Record<string, unknown> | undefined;
    let loggedResponse: string | undefined;
    const controller = new CallAbort();
    const onClose = () => {
      if (!reply.raw.writableFinished) controller.abort(new GatewayError('invalid_request', 'The client closed the connection.'));
    };
    // `on`, not `once`: the listener is removed in `finally` below, and once's wrapper would cost two objects a call.
    reply.raw.on('close', onClose);
    // The request's time cap (requestTimeoutMs) is enforced by the router, which caps every attempt's
    // timers by the time left; a second timer here would cost every call for nothing.
    dependencies.inflight.add();
    let status = 200;
    let streamed = false;
    const serve = async (authenticated: AuthContext, authCurrent: Promise<boolean> | undefined): Promise<void> => {
      auth = authenticated;
      if (auth.key.role !== 'inference' && auth.key.role !== 'org_admin') {
        throw new GatewayError('permission_denied', 'This key cannot call inference endpoints.');
      }
      let body: Record<string, unknown>;
      let files: Record<string, UploadedFile> | undefined;
      if (options.readMultipart && (!options.alsoJson || request.body instanceof PendingMultipart)) {
        const multipart = await options.readMultipart(request);
        body = validateBody(schema, multipart.fields) as Record<string, unknown>;
        files = multipart.files;
      } else if (options.quickCheck?.(request.body)) {
        body = request.body as Record<string, unknown>;
      } else {
        body = validateBody(schema, request.body) as Record<string, unknown>;
      }
      model = (body.model as string | undefined) ?? options.defaultModel?.();
      if (!model) throw new GatewayError('invalid_request', "Missing required parameter: 'model'.", { param: 'model' });
      checkModelAccess(auth, model, operation, dependencies.models);
      stream = body.stream === true;
      user = (body.user as string | undefined) ?? undefined;
      if (dependencies.logMessageContents || auth.org.settings.logMessageContents) loggedBody = body;
      dependencies.keys.markUsed(auth.key.id);
      if (options.identityHeaders) {
        record.headers['x-gw-org-id'] = auth.org.id;
        record.headers['x-gw-key-alias'] = auth.key.alias;
      }
      const call: GatewayCall = {
        requestId: request.id,
        operation,
        auth,
        authCurrent,
        model,
        request: body.model === model ? body : { ...body, model },
        stream,
        includeUsage: stream && (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true,
        user,
        signal: controller.signal,
        startedAt,
        files,
        record,
      };
      const outcome = await pipeline(call);
      if (outcome.kind === 'stream') {
        streamed = true;
        await sendStream(reply, call, outcome, startedAt);
      } else {
        publishCallStep(request.id, 'answer writing');
        sendOutcome(reply, record, outcome, startedAt);
        publishCallStep(request.id, 'answer handed to the socket');
        if (loggedBody && outcome.kind === 'json') loggedResponse = responseText(outcome.body);
      }
    };
    try {
      const token = bearerToken(request);
      let early = dependencies.keys.authenticateEarly(token);
      if (isPromise(early)) early = await early;
      try {
        await serve(early.auth, early.current);
      } catch (error) {
        // Any failure on a cached key not yet confirmed (the admission's own refusal, or
        // an earlier 400/403/429) is answered only once the key is known to be current: if it was
        // not, the call starts over on a fresh lookup, so a revoked key gets its 401. The pipeline
        // never passed the confirmation then: nothing was spent, and an upstream request that
        // left early (pipeline/admission.ts, overlap) was cancelled.
        if (early.current === undefined || streamed || (await early.current)) throw error;
        record = { headers: {} };
        loggedBody = undefined;
        loggedResponse = undefined;
        await serve(await dependencies.keys.authenticate(token), undefined);
      }
    } catch (error) {
      const gatewayError = error instanceof GatewayError ? error : undefined;
      status = gatewayError?.status ?? 500;
      record.errorCode = gatewayError?.code ?? 'internal_error';
      if (streamed) return;
      // Headers gathered so far (rate-limit state, request id) still describe this answer.
      reply.headers(record.headers);
      throw error;
    } finally {
      reply.raw.off('close', onClose);
      dependencies.inflight.done();
      const contents = loggedBody && loggedContents(record, loggedBody, loggedResponse);
      recordRequest(dependencies.recorder, request.id, operation, auth, model, user, record, status, startedAt, stream, contents);
    }
  };
}

const CONTENT_LIMIT_CHARS = 32_768;

/**
 * What the request log keeps of a call's contents: the messages as the pre-call guardrails left
 * them (redacted, when they redacted; the client's body otherwise), and nothing of a request a
 * guardrail blocked (only a note that its contents were withheld). Read once the call has ended,
 * since the guardrail stage runs inside the pipeline.
 */
function loggedContents(record: CallRecord, body: Record<string, unknown>, response: string | undefined): Record<string, unknown> {
  if (record.errorCode === 'guardrail_blocked') return { contents_withheld: 'guardrail_blocked' };
  const contents = requestContents(record.guardedRequest ?? body);
  if (response !== undefined) contents.response = response;
  return contents;
}

/** Text worth logging from a request, only when content logging is on; long values are cut. */
function requestContents(body: Record<string, unknown>): Record<string, unknown> {
  const contents: Record<string, unknown> = {};
  for (const field of ['messages', 'prompt', 'input', 'query'] as const) {
    if (body[field] === undefined) continue;
    const text = JSON.stringify(body[field]);
    contents[field] = text.length > CONTENT_LIMIT_CHARS ? `${text.slice(0, CONTENT_LIMIT_CHARS)}…` : body[field];
  }
  return contents;
}

function responseText(body: unknown): string | undefined {
  const choices = (body as { choices?: Array<{ message?: { content?: unknown }; text?: unknown }> } | undefined)?.choices;
  if (!choices?.length) return undefined;
  const text = choices.map((choice) => String(choice.message?.content ?? choice.text ?? '')).join('\n');
  return text.length > CONTENT_LIMIT_CHARS ? `${text.slice(0, CONTENT_LIMIT_CHARS)}…` : text;
}

function latencyHeader(startedAt: number): string {
  return (performance.now() - startedAt).toFixed(2);
}

function sendOutcome(reply: InferenceReply, record: CallRecord, outcome: Exclude<Outcome, { kind: 'stream' }>, startedAt: number): void {
  reply.headers(record.headers);
  reply.header('x-gw-latency-ms', latencyHeader(startedAt));
  if (outcome.kind === 'binary') {
    reply.header('content-type', outcome.contentType);
    reply.send(Buffer.from(outcome.bytes));
    return;
  }
  if (outcome.raw) {
    reply.header('content-type', outcome.contentType ?? 'application/json');
    reply.send(outcome.raw);
    return;
  }
  reply.send(outcome.body);
}

async function sendStream(reply: InferenceReply, call: GatewayCall, outcome: Extract<Outcome, { kind: 'stream' }>, startedAt: number): Promise<void> {
  reply.hijack();
  // Object.assign, not a spread literal: the two keys added to a spread copy cost a new hidden
  // class each on every stream (see buildContext in src/providers/http/create-http-provider.ts).
  const headers: Record<string, string> = Object.assign({}, call.record.headers, {
    'x-gw-request-id': call.requestId,
    'x-gw-latency-ms': latencyHeader(startedAt),
  });
  const result = await writeSseStream(reply.raw, outcome.events, {
    headers,
    includeUsage: call.includeUsage,
    onError: (error) => reply.log.warn({ err: error }, 'stream ended with an error'),
  });
  if (result.error) {
    const gatewayError = result.error instanceof GatewayError ? result.error : undefined;
    call.record.errorCode = gatewayError?.code ?? 'internal_error';
  }
}

function recordRequest(
  recorder: RequestRecorder,
  requestId: string,
  operation: Operation,
  auth: AuthContext | undefined,
  model: string | undefined,
  user: string | undefined,
  record: CallRecord,
  status: number,
  startedAt: number,
  stream: boolean,
  contents: Record<string, unknown> | undefined,
): void {
  const totals = record.usage ? usageTotals(record.usage) : { promptTokens: 0, completionTokens: 0 };
  const details: Record<string, unknown> = {};
  if (record.promptVersion !== undefined) details.prompt_version = record.promptVersion;
  if (record.abVariant !== undefined) details.ab_variant = record.abVariant;
  if (record.guardrailsTriggered?.length) details.guardrails_triggered = record.guardrailsTriggered;
  if (record.unpriced) details.unpriced = true;
  if (contents) Object.assign(details, contents);
  recorder.record({
    request_id: requestId,
    org_id: auth?.org.id ?? null,
    key_id: auth?.key.id ?? null,
    key_alias: auth?.key.alias ?? null,
    team_id: auth?.team?.id ?? null,
    user: user ?? null,
    model: model ?? null,
    operation,
    status: record.errorCode && status === 200 ? 500 : status,
    error_code: record.errorCode ?? null,
    latency_ms: Math.round((performance.now() - startedAt) * 100) / 100,
    prompt_tokens: totals.promptTokens,
    completion_tokens: totals.completionTokens,
    cost_nanos: record.costNanos ?? 0,
    deployment_id: record.deploymentId ?? null,
    attempts: record.attempts ?? 0,
    cache: record.cache ?? null,
    stream: stream ? 1 : 0,
    details: Object.keys(details).length ? JSON.stringify(details) : null,
    created_at: Date.now(),
  });
}
