import type { IncomingHttpHeaders } from 'node:http';
import type { Agent, Dispatcher } from 'undici';
import { undiciCore } from '../../lib/undici-core.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { UpstreamRequest } from './provider-adapter.js';
import type { CallSignal } from '../../lib/call-signal.js';
import { createHttp1Client, Http1TimeoutError, type Http1StreamSink } from './http1-client.js';
import { appendHeader } from './http1-response-reader.js';

/**
 * The one HTTP client for upstream calls. By default every exchange goes through gw's own HTTP/1.1
 * client (`http1-client.ts`), which does less per exchange than a general-purpose one; with
 * `upstreamClient: 'undici'` they go through an undici Agent (a keep-alive pool per origin) with
 * handlers of our own. Either way a streamed answer reaches its reader through the same
 * `StreamingHandler`. Network failures become GatewayErrors with the spec's statuses: timeouts
 * 504, refused/reset connections 503, broken answers 502.
 */
export interface UpstreamClient {
  /** The answer's body as it arrives, chunk by chunk (for streamed calls). */
  send(request: UpstreamRequest, options: SendOptions): Promise<StreamedResponse>;
  /** The whole answer in one buffer (for calls whose answer is used whole). */
  sendBuffered(request: UpstreamRequest, options: SendOptions): Promise<BufferedResponse>;
  close(): Promise<void>;
}

export interface BufferedResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface StreamedResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: UpstreamBody;
}

/**
 * An answer's body as it arrives: iterate it once (`for await`), or read the rest whole. Leaving
 * the loop early, or `destroy()`, ends the exchange and frees the connection.
 */
export interface UpstreamBody extends AsyncIterable<Buffer> {
  /** The rest of the body in one buffer, or its first `limitBytes` and no more (the exchange is then cut). */
  readAll(limitBytes?: number): Promise<Buffer>;
  destroy(): void;
  readonly destroyed: boolean;
}

export interface SendOptions {
  signal: CallSignal;
  /** Time allowed until response headers arrive. */
  firstByteMs: number;
  /** Longest silence allowed between body chunks. */
  idleMs: number;
  /** Time allowed to open the connection (TCP + TLS); the client's default when absent. */
  connectMs?: number;
  provider: string;
}

export interface UpstreamClientOptions {
  connectTimeoutMs?: number;
  connectionsPerOrigin?: number;
  keepAliveTimeoutMs?: number;
  /** Extra CA or TLS settings for tests. */
  connect?: Record<string, unknown>;
  /** Which client sends upstream requests: gw's own HTTP/1.1 client (default, `http1-client.ts`) or undici. */
  upstreamClient?: 'http1' | 'undici';
  /** gw's own client only: how long the loop polls for an answer due at once, in ms (lib/answer-wait-poller.ts); 0: never. */
  answerPollMs?: number;
}

export function createUpstreamClient(options: UpstreamClientOptions = {}): UpstreamClient {
  const defaultConnectMs = options.connectTimeoutMs ?? 10_000;
  const createAgent = (connectMs: number) =>
    new undiciCore.Agent({
      connections: options.connectionsPerOrigin ?? 256,
      pipelining: 1,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
      keepAliveMaxTimeout: 600_000,
      connect: { timeout: connectMs, ...options.connect },
    });
  // undici sets the connect timeout per pool, so each distinct deployment connect timeout gets its
  // own keep-alive agent (there are a handful at most), made on first use: with the default
  // client none is.
  const agents = new Map<number, Agent>();
  const agentFor = (connectMs: number | undefined) => {
    const key = connectMs ?? defaultConnectMs;
    let agent = agents.get(key);
    if (!agent) agents.set(key, (agent = createAgent(key)));
    return agent;
  };
  const http1 = (options.upstreamClient ?? 'http1') === 'undici' ? undefined : createHttp1Client({
    connectionsPerOrigin: options.connectionsPerOrigin ?? 256,
    keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? 30_000,
    connectTimeoutMs: defaultConnectMs,
    connect: options.connect,
    answerPollMs: options.answerPollMs,
  });
  const urlParts = new Map<string, { origin: string; path: string }>();
  const dispatch = (request: UpstreamRequest, sendOptions: SendOptions, handler: Dispatcher.DispatchHandler & { onError(error: Error): void }) => {
    try {
      const { origin, path } = splitUrl(request.url, urlParts);
      agentFor(sendOptions.connectMs).dispatch(
        {
          origin,
          path,
          method: request.method,
          headers: request.headers,
          body: request.body,
          headersTimeout: sendOptions.firstByteMs,
          bodyTimeout: sendOptions.idleMs,
        },
        handler,
      );
    } catch (error) {
      handler.onError(error as Error);
    }
  };
  return {
    send(request, sendOptions) {
      return new Promise<StreamedResponse>((resolve, reject) => {
        const handler = new StreamingHandler(sendOptions.signal, resolve, reject, (error) => toUpstreamError(error, sendOptions.provider, sendOptions.signal));
        if (http1) http1.stream(request, sendOptions, handler);
        else dispatch(request, sendOptions, handler);
      });
    },
    sendBuffered(request, sendOptions) {
      if (http1) {
        return http1.exchange(request, sendOptions, (error) => toUpstreamError(error, sendOptions.provider, sendOptions.signal));
      }
      return new Promise<BufferedResponse>((resolve, reject) => {
        const handler = new BufferingHandler(sendOptions.signal, resolve, (error) => reject(toUpstreamError(error, sendOptions.provider, sendOptions.signal)));
        dispatch(request, sendOptions, handler);
      });
    },
    close: async () => {
      await Promise.all([...[...agents.values()].map((agent) => agent.close()), http1?.close()]);
    },
  };
}

/**
 * What both answer handlers share: the call's signal ends the exchange at any point (before the
 * connection, while waiting for headers, mid-body), and stops being listened to once it is over.
 */
abstract class SignalledExchange {
  protected abortExchange: ((reason: Error) => void) | undefined;
  private readonly onAbort = () => {
    this.abortExchange?.(abortReason(this.signal));
  };

  constructor(protected readonly signal: CallSignal) {
    if (!signal.aborted) signal.addEventListener('abort', this.onAbort, { once: true });
  }

  onConnect(abort: (reason: Error) => void): void {
    if (this.signal.aborted) abort(abortReason(this.signal));
    else this.abortExchange = abort;
  }

  protected stopListening(): void {
    this.abortExchange = undefined;
    this.signal.removeEventListener('abort', this.onAbort);
  }
}

/**
 * Collects an answer's chunks and hands over the whole body once it is complete. It takes the
 * place of `request()`'s handler, which wraps every answer in a Readable stream and an async
 * resource that a body read whole anyway does not need: for a chat completion those were the
 * largest share of the bytes allocated per call (node streams and undici, ~16%). Aborting the
 * signal ends the exchange at any point, as with `request()`.
 */
class BufferingHandler extends SignalledExchange implements Dispatcher.DispatchHandler {
  private statusCode = 0;
  private headers: IncomingHttpHeaders = {};
  private readonly chunks: Buffer[] = [];
  private length = 0;
  private settled = false;

  constructor(
    signal: CallSignal,
    private readonly resolve: (response: BufferedResponse) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    super(signal);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[] | string[] | null): boolean {
    // 1xx answers (100 Continue, 103 Early Hints) come before the real one.
    if (statusCode < 200) return true;
    this.statusCode = statusCode;
    this.headers = headersFromRaw(rawHeaders ?? []);
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    this.length += chunk.length;
    return true;
  }

  onComplete(): void {
    if (this.settle()) return;
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.length);
    this.resolve({ statusCode: this.statusCode, headers: this.headers, body });
  }

  onError(error: Error): void {
    if (this.settle()) return;
    this.reject(error);
  }

  /** Stops listening to the signal; true if the exchange had already ended. */
  private settle(): boolean {
    if (this.settled) return true;
    this.settled = true;
    this.stopListening();
    return false;
  }
}

/** Bytes buffered ahead of a stream's reader before the upstream connection is paused. */
const STREAM_HIGH_WATER_BYTES = 64 * 1024;

/**
 * Hands an answer over as soon as its headers arrive, then its chunks to one reader as they come.
 * It takes the place of `request()`'s handler, whose Readable stream and async iterator put a
 * `nextTick`, an event and several promises between each chunk and the reader: every layer a
 * streamed answer crosses costs per chunk, and the first event waits for all of them. A reader
 * that falls 64 KiB behind pauses the connection until it catches up. Aborting the signal, or the
 * reader leaving, ends the exchange.
 */
class StreamingHandler extends SignalledExchange implements Dispatcher.DispatchHandler, Http1StreamSink, UpstreamBody {
  private resumeExchange: (() => void) | undefined;
  private headersArrived = false;
  private readonly chunks: Buffer[] = [];
  private bufferedBytes = 0;
  private paused = false;
  private ended = false;
  private failure: unknown;
  private waiting: { resolve(step: IteratorResult<Buffer>): void; reject(error: unknown): void } | undefined;
  destroyed = false;

  constructor(
    signal: CallSignal,
    private readonly resolve: (response: StreamedResponse) => void,
    private readonly reject: (error: unknown) => void,
    private readonly mapError: (error: unknown) => unknown,
  ) {
    super(signal);
  }

  /** undici's: the raw head, 1xx included. */
  onHeaders(statusCode: number, rawHeaders: Buffer[] | string[] | null, resume: () => void): boolean {
    if (statusCode >= 200) this.onResponseHead(statusCode, headersFromRaw(rawHeaders ?? []), resume);
    return true;
  }

  /** gw's HTTP/1.1 client's: the final head, parsed. */
  onResponseHead(statusCode: number, headers: IncomingHttpHeaders, resume: () => void): void {
    this.headersArrived = true;
    this.resumeExchange = resume;
    this.resolve({ statusCode, headers, body: this });
  }

  onData(chunk: Buffer): boolean {
    if (this.destroyed) return true;
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      waiting.resolve({ done: false, value: chunk });
      return true;
    }
    this.chunks.push(chunk);
    this.bufferedBytes += chunk.length;
    this.paused = this.bufferedBytes >= STREAM_HIGH_WATER_BYTES;
    return !this.paused;
  }

  onComplete(): void {
    this.finish();
    this.ended = true;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.resolve({ done: true, value: undefined });
  }

  onError(error: unknown): void {
    this.finish();
    if (!this.headersArrived) {
      this.headersArrived = true;
      this.reject(this.mapError(error));
      return;
    }
    if (this.ended || this.destroyed) return;
    this.failure = this.mapError(error);
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.reject(this.failure);
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    return {
      next: () => this.next(),
      return: () => {
        this.destroy();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }

  next(): Promise<IteratorResult<Buffer>> {
    const chunk = this.chunks.shift();
    if (chunk !== undefined) {
      this.bufferedBytes -= chunk.length;
      if (this.paused && this.bufferedBytes < STREAM_HIGH_WATER_BYTES / 2) {
        this.paused = false;
        this.resumeExchange?.();
      }
      return Promise.resolve({ done: false, value: chunk });
    }
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.ended || this.destroyed) return Promise.resolve({ done: true, value: undefined });
    if (this.waiting) return Promise.reject(new Error('an upstream body has one reader at a time'));
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  async readAll(limitBytes = Number.POSITIVE_INFINITY): Promise<Buffer> {
    const parts: Buffer[] = [];
    let length = 0;
    for (;;) {
      const step = await this.next();
      if (step.done) break;
      parts.push(step.value);
      length += step.value.length;
      if (length >= limitBytes) {
        this.destroy();
        break;
      }
    }
    const whole = parts.length === 1 ? parts[0]! : Buffer.concat(parts, length);
    return whole.length > limitBytes ? whole.subarray(0, limitBytes) : whole;
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.chunks.length = 0;
    this.bufferedBytes = 0;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.resolve({ done: true, value: undefined });
    if (!this.ended) this.abortExchange?.(new undiciCore.errors.RequestAbortedError());
    this.finish();
  }

  /** The exchange is over (or abandoned): the signal is no longer listened to. */
  private finish(): void {
    this.resumeExchange = undefined;
    this.stopListening();
  }
}

function abortReason(signal: CallSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new undiciCore.errors.RequestAbortedError();
}

/**
 * Response headers as Node presents them: lower-case names, a repeated header as an array of its
 * values in order. Values are read as latin1, as HTTP/1.1 defines them (and as undici does).
 */
export function headersFromRaw(raw: ReadonlyArray<Buffer | string>): IncomingHttpHeaders {
  const headers: Record<string, string | string[]> = {};
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = raw[index]!.toString('latin1').toLowerCase();
    if (name === '__proto__') continue;
    appendHeader(headers, name, raw[index + 1]!.toString('latin1'));
  }
  return headers;
}

/**
 * Origin and path of an upstream URL. A gateway calls the same few URLs again and again, and WHATWG
 * URL parsing is costly enough to show in a profile, so results are remembered (bounded).
 */
function splitUrl(url: string, cache: Map<string, { origin: string; path: string }>): { origin: string; path: string } {
  let parts = cache.get(url);
  if (!parts) {
    const parsed = new URL(url);
    parts = { origin: parsed.origin, path: parsed.pathname + parsed.search };
    if (cache.size >= 1000) cache.clear();
    cache.set(url, parts);
  }
  return parts;
}

/** Maps a transport failure to the spec's statuses. A client abort is rethrown as it is. */
export function toUpstreamError(error: unknown, provider: string, signal?: CallSignal): unknown {
  if (error instanceof GatewayError) return error;
  if (signal?.aborted) {
    const reason = signal.reason;
    if (reason instanceof GatewayError) return reason;
    return error;
  }
  if (
    error instanceof Http1TimeoutError ||
    error instanceof undiciCore.errors.HeadersTimeoutError ||
    error instanceof undiciCore.errors.BodyTimeoutError ||
    error instanceof undiciCore.errors.ConnectTimeoutError
  ) {
    return new GatewayError('upstream_timeout', `The provider did not respond in time (${provider}).`, { provider, cause: error });
  }
  const code = (error as { code?: string } | undefined)?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH') {
    return new GatewayError('upstream_unavailable', `The provider is unreachable (${provider}).`, { provider, cause: error });
  }
  return new GatewayError('upstream_bad_response', `The provider connection failed (${provider}).`, { provider, cause: error });
}
