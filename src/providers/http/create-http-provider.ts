import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Operation } from '../../protocol/endpoints.js';
import { publishCallStep } from '../../observability/call-steps.js';
import type { Outcome, StreamEvent } from '../../pipeline/stage.js';
import { createSseParser } from '../../lib/sse-parser.js';
import { createAwsEventStreamDecoder } from '../../lib/aws-event-stream.js';
import type { Invocation, Provider } from '../provider.js';
import type {
  OperationTranslator,
  ProviderAdapter,
  StreamFraming,
  TranslationContext,
  UpstreamStreamMessage,
} from './provider-adapter.js';
import { toUpstreamError, type StreamedResponse, type UpstreamClient } from './upstream-client.js';
import type { CallSignal } from '../../lib/call-signal.js';
import { acceptUpstreamUsage } from './upstream-usage.js';
import { answerAsStream } from './answer-as-stream.js';

/** Splits an upstream byte stream into messages; one per stream. */
export interface FrameDecoder {
  push(chunk: Uint8Array): UpstreamStreamMessage[];
  end(): UpstreamStreamMessage[];
}

export type FrameDecoderFactories = Partial<Record<StreamFraming, () => FrameDecoder>>;

/** An upstream's usage that could not be billed (upstream-usage.ts); the call goes on, metered from an estimate. */
export interface RejectedUsage {
  provider: string;
  deploymentId: string;
  requestId: string;
  problem: string;
}

export interface HttpProviderOptions {
  /** Told about every rejected usage, to log it as a warning. */
  onUsageRejected?: (rejected: RejectedUsage) => void;
}

const DEFAULT_DECODERS: FrameDecoderFactories = {
  sse: createSseParser,
  ndjson: createNdjsonDecoder,
  'aws-eventstream': createAwsEventStreamDecoder,
};

/** Largest error body we read from an upstream, to quote its message. */
const ERROR_BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Turns a pure ProviderAdapter into a Provider by adding the transport: send with the shared
 * upstream client, map error answers with the adapter, decode stream framing, translate events.
 */
export function createHttpProvider(
  adapter: ProviderAdapter,
  client: UpstreamClient,
  decoders: FrameDecoderFactories = {},
  options: HttpProviderOptions = {},
): Provider {
  const operations = new Set(Object.keys(adapter.translators) as Operation[]);
  const decoderFactory = decoders[adapter.streamFraming] ?? DEFAULT_DECODERS[adapter.streamFraming];

  return {
    id: adapter.id,
    operations,
    // undici rejects the pending request, or errors the body being read, when the signal aborts.
    honoursAbortSignal: true,
    // Not an async function: one returning sendOne's promise would settle a turn of two microtasks
    // and a promise later, on every call. A synchronous failure is still answered as a rejection.
    invoke(invocation: Invocation): Promise<Outcome> {
      try {
        return send(invocation);
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };

  function send(invocation: Invocation): Promise<Outcome> {
    const { call, target, signal } = invocation;
    const translator = adapter.translators[call.operation] as OperationTranslator | undefined;
    if (!translator) {
      throw new GatewayError('unsupported_model', `Provider ${adapter.id} does not serve ${call.operation}.`);
    }
    const context: TranslationContext = {
      model: call.model,
      target,
      requestId: call.requestId,
      created: Math.floor(Date.now() / 1000),
    };
    const usageRejected = (problem: string) =>
      options.onUsageRejected?.({ provider: adapter.id, deploymentId: target.deploymentId, requestId: call.requestId, problem });
    const streaming = call.stream && translator.createStreamTranslator !== undefined;
    const request = call.files ? { ...call.request, files: call.files } : call.request;
    const sendOptions = {
      signal,
      firstByteMs: target.timeouts.firstByteMs,
      idleMs: target.timeouts.firstByteMs,
      connectMs: target.timeouts.connectMs,
      provider: adapter.id,
    };
    const sendOne = async (request: Record<string, unknown>, streaming: boolean): Promise<Outcome> => {
      const upstreamRequest = translator.buildRequest(request, buildContext(context, streaming));
      if (!streaming) {
        const response = await client.sendBuffered(upstreamRequest, sendOptions);
        publishCallStep(context.requestId, 'answer read');
        const answer = answerFromBody(adapter, translator, context, request, response.statusCode, response.headers, response.body, usageRejected);
        publishCallStep(context.requestId, 'answer translated');
        return answer;
      }

      const response = await client.send(upstreamRequest, sendOptions);
      if (response.statusCode >= 400) throw await readError(adapter, response);
      const contentType = String(response.headers['content-type'] ?? '');
      if (!contentType.includes('application/json')) {
        if (!decoderFactory) {
          // Unread, the answer would hold its connection until the upstream gave up.
          response.body.destroy();
          throw new Error(`no stream decoder for ${adapter.streamFraming}`);
        }
        return {
          kind: 'stream',
          events: translateStream(response, translator.createStreamTranslator!(context), decoderFactory(), adapter.id, signal, usageRejected),
        };
      }
      // A stream was asked for and a JSON answer came back (some providers answer that way): the
      // client still gets the stream it asked for, SDKs in stream mode read nothing else.
      const raw = await response.body.readAll();
      const answer = answerFromBody(adapter, translator, context, request, response.statusCode, response.headers, raw, usageRejected);
      if (answer.kind !== 'json') throw new GatewayError('upstream_bad_response', `The provider answered a stream request with a binary body (${adapter.id}).`, { provider: adapter.id });
      return { kind: 'stream', events: answerAsStream(call.operation, answer.body, answer.usage, adapter.id) };
    };
    const parts = streaming ? undefined : (translator.splitRequest?.(request) as Record<string, unknown>[] | undefined);
    if (parts && translator.mergeBodies) return answerInParts(adapter, parts, translator.mergeBodies, (part) => sendOne(part, false));
    return sendOne(request, streaming);
  }
}

/**
 * A request split for an upstream's batch limit: the parts are sent one after another (a split
 * batch should not multiply the call's rate at the upstream), their bodies merged in order and
 * their usage added up. Any part failing fails the call, as the whole would have.
 */
async function answerInParts(
  adapter: ProviderAdapter,
  parts: Record<string, unknown>[],
  mergeBodies: (bodies: unknown[]) => unknown,
  send: (part: Record<string, unknown>) => Promise<Outcome>,
): Promise<Outcome> {
  const bodies: unknown[] = [];
  const usage: Record<string, number> = {};
  for (const part of parts) {
    const answer = await send(part);
    if (answer.kind !== 'json') {
      throw new GatewayError('upstream_bad_response', `The provider answered part of a split request with a non-JSON body (${adapter.id}).`, { provider: adapter.id });
    }
    bodies.push(answer.body);
    for (const [field, value] of Object.entries(answer.usage ?? {})) if (typeof value === 'number') usage[field] = (usage[field] ?? 0) + value;
  }
  return { kind: 'json', body: mergeBodies(bodies), usage };
}

/** The outcome of an answer read whole: an error, a JSON body or a binary one. */
function answerFromBody(
  adapter: ProviderAdapter,
  translator: OperationTranslator,
  context: TranslationContext,
  request: Record<string, unknown>,
  statusCode: number,
  headers: IncomingHttpHeaders,
  raw: Buffer,
  usageRejected: (problem: string) => void,
): Outcome {
  if (statusCode >= 400) throw errorFromBody(adapter, statusCode, raw.toString('utf8', 0, ERROR_BODY_LIMIT_BYTES), headers);
  const contentType = String(headers['content-type'] ?? '');
  let parsed: unknown = raw;
  if (contentType.includes('json')) {
    try {
      parsed = JSON.parse(raw.toString('utf8'));
    } catch (error) {
      throw new GatewayError('upstream_bad_response', `The provider returned invalid JSON (${adapter.id}).`, {
        provider: adapter.id,
        cause: error,
      });
    }
  }
  const result = translator.parseResponse(parsed, parseContext(context, request, contentType, raw));
  const usage = acceptUpstreamUsage(result.usage, usageRejected);
  if (result.binary) return { kind: 'binary', contentType: result.binary.contentType, bytes: result.binary.bytes, usage };
  return { kind: 'json', body: result.body, usage, raw: result.passthrough ? (result.raw ?? raw) : undefined };
}

/*
 * The two contexts a translator is handed are written out field by field, not spread from the
 * call's context: on Node 20 an object literal that spreads an object and then adds a key it lacks
 * (`{ ...context, stream }`) gets a hidden class of its own every time, because V8 does not cache
 * the transition from the clone's class. That cost ~1.4 µs a call per literal and left two classes
 * a call for the full collector to sweep; `node bench/allocation-profile.mjs --hidden-classes`
 * counts such classes per call. A field added to TranslationContext must be added here too (the
 * return types ask for every required one).
 */
function buildContext(context: TranslationContext, stream: boolean): TranslationContext & { stream: boolean } {
  return { model: context.model, target: context.target, requestId: context.requestId, created: context.created, stream };
}

function parseContext(
  context: TranslationContext,
  request: Record<string, unknown>,
  contentType: string,
  raw: Buffer,
): TranslationContext & { contentType: string; raw: Buffer; request: Record<string, unknown> } {
  return { model: context.model, target: context.target, requestId: context.requestId, created: context.created, contentType, raw, request };
}

async function readError(adapter: ProviderAdapter, response: StreamedResponse): Promise<GatewayError> {
  let text = '';
  try {
    text = (await response.body.readAll(ERROR_BODY_LIMIT_BYTES)).toString('utf8');
  } catch {
    // The status alone is enough to classify the failure.
  }
  return errorFromBody(adapter, response.statusCode, text, response.headers);
}

function errorFromBody(adapter: ProviderAdapter, statusCode: number, text: string, headers: IncomingHttpHeaders): GatewayError {
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the adapter gets the text.
  }
  return adapter.parseError(statusCode, body, headers);
}

async function* translateStream(
  response: StreamedResponse,
  translator: ReturnType<NonNullable<OperationTranslator['createStreamTranslator']>>,
  decoder: FrameDecoder,
  provider: string,
  signal: CallSignal,
  usageRejected: (problem: string) => void,
): AsyncGenerator<StreamEvent> {
  // Only the event that carries usage (one per stream) is looked at.
  const checked = (event: StreamEvent): StreamEvent => {
    if (event.usage !== undefined) event.usage = acceptUpstreamUsage(event.usage, usageRejected);
    return event;
  };
  try {
    for await (const chunk of response.body) {
      for (const message of decoder.push(chunk)) {
        for (const event of translator.translate(message)) yield checked(event);
      }
    }
    for (const message of decoder.end()) {
      for (const event of translator.translate(message)) yield checked(event);
    }
    for (const event of translator.finish()) yield checked(event);
  } catch (error) {
    throw toUpstreamError(error, provider, signal);
  } finally {
    // Stops reading (and frees the socket) when the consumer leaves early.
    if (!response.body.destroyed) response.body.destroy();
  }
}

/** Newline-delimited JSON, one message per line. */
export function createNdjsonDecoder(): FrameDecoder {
  const decoder = new TextDecoder();
  let buffer = '';
  const take = (final: boolean): UpstreamStreamMessage[] => {
    const lines = buffer.split('\n');
    buffer = final ? '' : (lines.pop() ?? '');
    return lines.map((line) => line.trim()).filter(Boolean).map((data) => ({ data }));
  };
  return {
    push(chunk) {
      buffer += decoder.decode(chunk, { stream: true });
      return take(false);
    },
    end() {
      buffer += decoder.decode();
      return take(true);
    },
  };
}
