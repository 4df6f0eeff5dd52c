import { channel } from 'node:diagnostics_channel';
import type { IncomingHttpHeaders } from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import type { BufferedResponse, SendOptions } from './upstream-client.js';
import type { UpstreamRequest } from './provider-adapter.js';
import { Http1ResponseReader, type ResponseListener } from './http1-response-reader.js';
import type { CallSignal } from '../../lib/call-signal.js';
import { HEADER_NAME, headAndBody } from '../../lib/http-syntax.js';
import { AnswerTimes, createAnswerWaitPoller, NO_ANSWER_WAIT_POLLING, type AnswerWaitPoller } from '../../lib/answer-wait-poller.js';

/**
 * A lean HTTP/1.1 client for upstream calls: a keep-alive pool of sockets per origin, the request
 * written in one go, the answer read by `Http1ResponseReader`, either whole (`exchange`) or part
 * by part as it arrives (`stream`, for streamed calls).
 *
 * Why: between a request's arrival and its answer a gateway is two HTTP hops, and on the
 * benchmark machine the general-purpose clients' machinery (undici's dispatcher, request and
 * pool objects, its parser compiled to WebAssembly) was a large share of what the gateway added to
 * a call. A client that knows it sends one request per connection at a time needs very little of
 * it. docs/pipeline.md, "A client of our own for upstream calls", has the measurements.
 */
export interface Http1Client {
  /**
   * Sends the request and reads its answer whole. A failure is rejected as `describeError` makes it
   * (the caller's error type), so the caller need not chain a `.catch`: a promise and a turn of the
   * event loop's microtasks less per call.
   */
  exchange(request: UpstreamRequest, options: SendOptions, describeError?: (error: unknown) => unknown): Promise<BufferedResponse>;
  /**
   * Sends the request and tells `sink` of the answer as it arrives. The sink listens to the call's
   * signal itself and ends the exchange through the `abort` it is given (upstream-client.ts).
   */
  stream(request: UpstreamRequest, options: SendOptions, sink: Http1StreamSink): void;
  close(): Promise<void>;
}

/**
 * What a streamed exchange tells its reader, in this order: `onConnect` at once, then either
 * `onError`, or `onResponseHead` followed by `onData` for each part of the body and finally
 * `onComplete` or `onError`. Nothing follows `onComplete` or `onError`.
 */
export interface Http1StreamSink {
  /** `abort` ends the exchange (the reader left, or the call's signal aborted); the sink is then told `onError(reason)`. */
  onConnect(abort: (reason: Error) => void): void;
  /** The final answer's head (1xx interim answers are skipped). `resume` restarts reading after `onData` returned false. */
  onResponseHead(statusCode: number, headers: IncomingHttpHeaders, resume: () => void): void;
  /** A part of the body, de-chunked. Returning false pauses the connection (and its silence timer) until `resume`. */
  onData(part: Buffer): boolean;
  onComplete(): void;
  onError(error: unknown): void;
}

export interface Http1ClientOptions {
  connectionsPerOrigin: number;
  /** Longest time an idle connection is kept (shortened to what the server announces). */
  keepAliveTimeoutMs: number;
  connectTimeoutMs: number;
  /** Extra TLS settings (a test CA). */
  connect?: Record<string, unknown>;
  /**
   * Longest time, in ms, the event loop polls for an answer instead of sleeping, for origins whose
   * recent answers came within it (lib/answer-wait-poller.ts); 0 or absent: never.
   */
  answerPollMs?: number;
  /** The poller itself (tests); made from `answerPollMs` when absent. */
  answerPoller?: AnswerWaitPoller;
}

/** A failure to connect, or a silence, longer than allowed. `phase` says which timer ran out. */
export class Http1TimeoutError extends Error {
  readonly code = 'GW_UPSTREAM_TIMEOUT';
  constructor(readonly phase: 'connect' | 'headers' | 'body') {
    super(`upstream ${phase} timeout`);
  }
}

/** The connection ended before the whole answer arrived. */
export class Http1ConnectionClosedError extends Error {
  readonly code = 'ECONNRESET';
}

/**
 * Diagnostics channels named after undici's, so a probe can time this client's exchanges as it
 * times undici's (bench/lib/call-timeline-probe.mjs). Each message is `{ request }`, one object per
 * exchange. Unsubscribed, a publish costs one property read.
 */
const onCreate = channel('gw:upstream:request:create');
const onHeadersWritten = channel('gw:upstream:client:sendHeaders');
const onAnswerHeaders = channel('gw:upstream:request:headers');
const onFirstBodyBytes = channel('gw:upstream:request:bodyChunkReceived');
const onError = channel('gw:upstream:request:error');

/** Margin kept before a server's announced keep-alive timeout, so we never write into a closing socket. */
const KEEP_ALIVE_MARGIN_MS = 1_000;
const HEADER_VALUE_FORBIDDEN = /[\r\n\0]/;

interface Origin {
  key: string;
  secure: boolean;
  host: string;
  port: number;
  hostHeader: string;
  connectMs: number;
  idle: Connection[];
  open: number;
  waiting: Exchange[];
  tlsSession?: Buffer;
  /** How long its answers take to start: whether the loop polls for the next one (answer-wait-poller.ts). */
  answerTimes: AnswerTimes;
}

export function createHttp1Client(options: Http1ClientOptions): Http1Client {
  const origins = new Map<string, Origin>();
  const poller = options.answerPoller ?? (options.answerPollMs ? createAnswerWaitPoller({ windowMs: options.answerPollMs }) : NO_ANSWER_WAIT_POLLING);
  const urlParts = new Map<string, { origin: Origin; path: string }>();
  let closed = false;

  const originOf = (url: string, connectMs: number): { origin: Origin; path: string } => {
    const cacheKey = connectMs === options.connectTimeoutMs ? url : `${connectMs} ${url}`;
    let parts = urlParts.get(cacheKey);
    if (parts) return parts;
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new TypeError(`unsupported protocol ${parsed.protocol}`);
    const secure = parsed.protocol === 'https:';
    const key = `${connectMs} ${parsed.origin}`;
    let origin = origins.get(key);
    if (!origin) {
      origin = {
        key,
        secure,
        host: parsed.hostname.replace(/^\[|\]$/g, ''),
        port: Number(parsed.port || (secure ? 443 : 80)),
        hostHeader: parsed.host,
        connectMs,
        idle: [],
        open: 0,
        waiting: [],
        answerTimes: new AnswerTimes(),
      };
      origins.set(key, origin);
    }
    parts = { origin, path: parsed.pathname + parsed.search };
    if (urlParts.size >= 1000) urlParts.clear();
    urlParts.set(cacheKey, parts);
    return parts;
  };

  const connect = (origin: Origin): Connection => {
    origin.open++;
    if (!origin.secure) return new Connection(origin, net.connect({ host: origin.host, port: origin.port }), release, poller);
    const socket = tls.connect({
      host: origin.host,
      port: origin.port,
      servername: net.isIP(origin.host) ? undefined : origin.host,
      ALPNProtocols: ['http/1.1'],
      // A new connection to an origin resumes the TLS session of an earlier one: one round trip less.
      session: origin.tlsSession,
      ...options.connect,
    });
    socket.on('session', (session: Buffer) => (origin.tlsSession = session));
    return new Connection(origin, socket, release, poller);
  };

  /** A connection finished an exchange (or died): reuse it for a waiting exchange, park it, or drop it. */
  const release = (connection: Connection, reusable: boolean): void => {
    const origin = connection.origin;
    if (!reusable || closed) {
      connection.destroy();
      origin.open--;
      const next = origin.waiting.shift();
      if (next && closed) next.fail(new Error('the upstream client is closed'));
      else if (next) start(connect(origin), next);
      return;
    }
    const next = origin.waiting.shift();
    if (next) return start(connection, next);
    connection.park(options.keepAliveTimeoutMs);
    origin.idle.push(connection);
  };

  const start = (connection: Connection, exchange: Exchange): void => {
    if (exchange.signal.aborted) {
      exchange.fail(exchange.signal.reason);
      return release(connection, connection.usable());
    }
    connection.run(exchange);
  };

  /** Sends the exchange on an idle connection, a new one, or once one is free. */
  const begin = (origin: Origin, exchange: Exchange): void => {
    if (onCreate.hasSubscribers) onCreate.publish({ request: exchange });
    let connection: Connection | undefined;
    while ((connection = origin.idle.pop())) {
      if (connection.usable()) break;
      connection.destroy();
      origin.open--;
    }
    if (connection) return start(connection, exchange);
    if (origin.open < options.connectionsPerOrigin) return start(connect(origin), exchange);
    origin.waiting.push(exchange);
    exchange.onAbandon = () => {
      const index = origin.waiting.indexOf(exchange);
      if (index >= 0) origin.waiting.splice(index, 1);
    };
  };

  /** The exchange for a request, and its origin; throws on a closed client, a bad URL or an unsafe header. */
  const prepare = (request: UpstreamRequest, sendOptions: SendOptions, answer: WholeAnswer | Http1StreamSink) => {
    if (closed) throw new Error('the upstream client is closed');
    const { origin, path } = originOf(request.url, sendOptions.connectMs ?? options.connectTimeoutMs);
    return { origin, exchange: new Exchange(encodeRequest(request, path, origin.hostHeader), request.method, sendOptions, answer) };
  };

  return {
    exchange(request, sendOptions, describeError) {
      return new Promise<BufferedResponse>((resolve, rejectAsIs) => {
        const reject = describeError === undefined ? rejectAsIs : (error: unknown) => rejectAsIs(describeError(error));
        try {
          const { origin, exchange } = prepare(request, sendOptions, { resolve, reject });
          begin(origin, exchange);
        } catch (error) {
          reject(error);
        }
      });
    },
    stream(request, sendOptions, sink) {
      try {
        const { origin, exchange } = prepare(request, sendOptions, sink);
        sink.onConnect((reason) => exchange.abandon(reason));
        // A signal aborted already has ended it through onConnect: nothing is sent.
        if (!exchange.settled) begin(origin, exchange);
      } catch (error) {
        sink.onError(error);
      }
    },
    async close() {
      closed = true;
      for (const origin of origins.values()) {
        for (const connection of origin.idle.splice(0)) connection.destroy();
        for (const exchange of origin.waiting.splice(0)) exchange.fail(new Error('the upstream client is closed'));
      }
    },
  };
}

/** A request line and headers checked and written once, for a frozen headers object (see encodeRequest). */
interface WrittenHead {
  method: string;
  path: string;
  hostHeader: string;
  text: string;
}

const writtenHeads = new WeakMap<Readonly<Record<string, string>>, WrittenHead>();

/**
 * The request's bytes in one buffer, so it leaves in one write: request line and headers as latin1
 * (as HTTP/1.1 defines them), the body after them. An adapter that hands every call to a
 * deployment the same frozen headers object (providers/compatible/compatible-adapter.ts) has them
 * checked and written once, not on every call; a frozen object cannot have changed since.
 */
function encodeRequest(request: UpstreamRequest, path: string, hostHeader: string): Buffer {
  const headers = request.headers;
  const frozen = Object.isFrozen(headers);
  let written = frozen ? writtenHeads.get(headers) : undefined;
  if (written === undefined || written.method !== request.method || written.path !== path || written.hostHeader !== hostHeader) {
    written = { method: request.method, path, hostHeader, text: requestHead(request, path, hostHeader) };
    if (frozen) writtenHeads.set(headers, written);
  }
  let head = written.text;
  const body = request.body;
  const bodyLength = body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length;
  if (body !== undefined || request.method === 'POST') head += `content-length: ${bodyLength}\r\n`;
  head += '\r\n';
  return headAndBody(head, body, bodyLength);
}

/** The request line and the headers, each checked, with Host; framing (Content-Length and the blank line) is added per request. */
function requestHead(request: UpstreamRequest, path: string, hostHeader: string): string {
  let head = `${request.method} ${path} HTTP/1.1\r\n`;
  let hasHost = false;
  for (const name in request.headers) {
    const value = request.headers[name]!;
    if (!HEADER_NAME.test(name) || HEADER_VALUE_FORBIDDEN.test(value)) throw new TypeError(`invalid header ${JSON.stringify(name)}`);
    const lower = name.toLowerCase();
    // Framing is this client's to decide.
    if (lower === 'content-length' || lower === 'transfer-encoding' || lower === 'connection') continue;
    if (lower === 'host') hasHost = true;
    head += `${name}: ${value}\r\n`;
  }
  if (!hasHost) head += `host: ${hostHeader}\r\n`;
  return head;
}

/** Where an answer read whole goes. */
interface WholeAnswer {
  resolve(response: BufferedResponse): void;
  reject(error: unknown): void;
}

/**
 * One request and its answer: the timers' limits, the call's signal, and how it ends: handed over
 * whole, or told part by part to a stream sink (which then listens to the signal itself).
 */
class Exchange {
  readonly signal: CallSignal;
  readonly firstByteMs: number;
  readonly idleMs: number;
  /** Exactly one of the two is set. */
  readonly sink: Http1StreamSink | undefined;
  private readonly whole: WholeAnswer | undefined;
  onAbandon: (() => void) | undefined;
  settled = false;
  private readonly onAbort = () => this.abandon(this.signal.reason instanceof Error ? this.signal.reason : new Error('aborted'));

  constructor(
    readonly bytes: Buffer,
    readonly method: string,
    options: SendOptions,
    answer: WholeAnswer | Http1StreamSink,
  ) {
    this.signal = options.signal;
    this.firstByteMs = options.firstByteMs;
    this.idleMs = options.idleMs;
    if ('onData' in answer) this.sink = answer;
    else this.whole = answer;
    if (this.whole && !this.signal.aborted) this.signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Given up by its caller, wherever it is (waiting for a connection, or on one). */
  abandon(reason: Error): void {
    if (this.settled) return;
    this.onAbandon?.();
    this.fail(reason);
  }

  /** The answer is complete: its body is in the reader, unless a sink took it part by part. */
  succeed(reader: Http1ResponseReader): void {
    if (!this.settle()) return;
    this.sink?.onComplete();
    this.whole?.resolve({ statusCode: reader.statusCode, headers: reader.headers, body: reader.body() });
  }

  fail(error: unknown): void {
    if (!this.settle()) return;
    if (onError.hasSubscribers) onError.publish({ request: this, error });
    this.sink?.onError(error);
    this.whole?.reject(error);
  }

  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    this.onAbandon = undefined;
    if (this.whole) this.signal.removeEventListener('abort', this.onAbort);
    return true;
  }
}

/**
 * One socket to an origin, serving one exchange at a time. Its listeners are attached once, when
 * it opens, and route events to the exchange it is running, so an exchange adds no listeners of
 * its own to the socket.
 */
class Connection {
  private exchange: Exchange | undefined;
  private reader: Http1ResponseReader | undefined;
  private connected = false;
  private bodyStarted = false;
  private dead = false;
  private idleUntil = 0;
  /** A stream's sink asked for a pause while the last chunk was read; `paused` once the socket is. */
  private pauseWanted = false;
  private paused = false;
  /** When the running exchange's request was written on a connected socket (0: not yet, or not timed). */
  private sentAt = 0;
  /** Whether the loop polls for the running exchange's answer (answer-wait-poller.ts). */
  private polled = false;
  /** Passes a streamed answer's head and body parts to the running exchange's sink, as the reader reads them. */
  private readonly streamListener: ResponseListener = {
    onHead: () => {
      const exchange = this.exchange!;
      const reader = this.reader!;
      exchange.sink!.onResponseHead(reader.statusCode, reader.headers, () => this.resume(exchange));
    },
    onBodyPart: (part) => {
      if (!this.exchange!.sink!.onData(part)) this.pauseWanted = true;
    },
  };

  constructor(
    readonly origin: Origin,
    private readonly socket: net.Socket,
    private readonly release: (connection: Connection, reusable: boolean) => void,
    private readonly poller: AnswerWaitPoller,
  ) {
    socket.setNoDelay(true);
    socket.setTimeout(origin.connectMs);
    socket.once(origin.secure ? 'secureConnect' : 'connect', () => {
      this.connected = true;
      if (this.exchange) socket.setTimeout(this.exchange.firstByteMs);
    });
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('timeout', () => this.onTimeout());
    socket.on('error', (error) => this.onEnd(error));
    socket.on('close', () => this.onEnd(undefined));
  }

  /** Whether an idle connection may take a request now. */
  usable(): boolean {
    return !this.dead && !this.socket.destroyed && this.socket.writable && Date.now() < this.idleUntil;
  }

  run(exchange: Exchange): void {
    this.exchange = exchange;
    this.reader = new Http1ResponseReader(exchange.method, exchange.sink ? this.streamListener : undefined);
    this.bodyStarted = false;
    this.socket.ref();
    if (this.connected) this.socket.setTimeout(exchange.firstByteMs);
    exchange.onAbandon = () => {
      // The call gave up mid-exchange: the socket's state is unknown, so it goes.
      this.exchange = undefined;
      this.finish(false);
    };
    // Published as the request is handed to the socket, the moment undici publishes its own.
    if (onHeadersWritten.hasSubscribers) onHeadersWritten.publish({ request: exchange });
    this.socket.write(exchange.bytes);
    // Only an exchange on a connection already open is timed (and polled for): a new one's first
    // answer also waits for the connection, which says nothing of how fast the origin answers.
    if (this.connected) {
      this.sentAt = performance.now();
      this.polled = this.poller.sent(this.origin.answerTimes, this.sentAt);
    }
  }

  /**
   * Keeps the idle socket for at most `keepAliveMs`, and for a second less than the server said it
   * would (when it said). A request is never sent twice: should a server close a kept-alive
   * connection just as a request goes out, the attempt fails like any dropped connection and the
   * router retries or fails over (a dropped request may have been read, and run, upstream).
   */
  park(keepAliveMs: number): void {
    const hintMs = this.reader?.keepAliveHintMs;
    const keepMs = Math.max(0, hintMs === undefined ? keepAliveMs : Math.min(keepAliveMs, hintMs - KEEP_ALIVE_MARGIN_MS));
    this.idleUntil = Date.now() + keepMs;
    this.reader = undefined;
    // An idle socket neither keeps the process alive nor outlives its use.
    this.socket.setTimeout(keepMs + 100);
    this.socket.unref();
  }

  destroy(): void {
    this.dead = true;
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    const exchange = this.exchange;
    const reader = this.reader;
    if (!exchange || !reader) {
      // Bytes nobody asked for: the connection can no longer be trusted.
      this.dropIdle();
      return;
    }
    let complete: boolean;
    const headBefore = reader.headComplete;
    this.pauseWanted = false;
    try {
      complete = reader.push(chunk);
    } catch (error) {
      this.exchange = undefined;
      exchange.fail(error);
      this.finish(false);
      return;
    }
    if (reader.headComplete && !headBefore) {
      // From the answer's head on, the timer measures silences in its body. The read that brought
      // the head restarted the socket's timer already, so only a different length needs setting
      // (setTimeout makes a new timer each time); the gateway's calls give both the same length.
      if (this.socket.timeout !== exchange.idleMs) this.socket.setTimeout(exchange.idleMs);
      this.answerStarted();
      if (onAnswerHeaders.hasSubscribers) onAnswerHeaders.publish({ request: exchange });
    }
    if (!this.bodyStarted && reader.bodyBytes > 0) {
      this.bodyStarted = true;
      if (onFirstBodyBytes.hasSubscribers) onFirstBodyBytes.publish({ request: exchange });
    }
    if (!complete) {
      // A sink that fell behind: no more reads, and no silence timer, until it catches up.
      if (this.pauseWanted && this.exchange === exchange && !this.paused) {
        this.paused = true;
        this.socket.setTimeout(0);
        this.socket.pause();
      }
      return;
    }
    this.exchange = undefined;
    exchange.succeed(reader);
    this.finish(reader.reusable);
  }

  /** A stream's sink caught up: reading (and the silence timer) start again, if the exchange is still on. */
  private resume(exchange: Exchange): void {
    if (!this.paused || this.exchange !== exchange) return;
    this.paused = false;
    this.socket.setTimeout(exchange.idleMs);
    this.socket.resume();
  }

  private onTimeout(): void {
    const exchange = this.exchange;
    if (!exchange) return this.dropIdle();
    this.exchange = undefined;
    exchange.fail(new Http1TimeoutError(!this.connected ? 'connect' : this.reader?.headComplete ? 'body' : 'headers'));
    this.finish(false);
  }

  private onEnd(error: Error | undefined): void {
    if (this.dead) return;
    this.dead = true;
    const exchange = this.exchange;
    const reader = this.reader;
    this.exchange = undefined;
    if (!exchange) return this.dropIdle();
    if (reader && reader.end()) exchange.succeed(reader);
    else exchange.fail(error ?? new Http1ConnectionClosedError('the upstream closed the connection before the answer was complete'));
    this.finish(false);
  }

  /** An idle connection died, timed out or sent bytes nobody asked for: it leaves the pool. */
  private dropIdle(): void {
    this.dead = true;
    this.socket.destroy();
    const idle = this.origin.idle;
    const index = idle.indexOf(this);
    if (index < 0) return; // not parked: whoever released it has accounted for it
    idle.splice(index, 1);
    this.origin.open--;
  }

  /** The running exchange's answer began (or the exchange ended): its time is recorded, and nothing more is polled for. */
  private answerStarted(): void {
    if (this.sentAt !== 0) this.origin.answerTimes.record(performance.now() - this.sentAt);
    this.stopWaiting();
  }

  /** Nothing more is awaited of the running exchange: it is no longer timed, nor polled for. */
  private stopWaiting(): void {
    this.sentAt = 0;
    if (this.polled) {
      this.polled = false;
      this.poller.settled();
    }
  }

  private finish(reusable: boolean): void {
    // An exchange that ended without an answer's head (failed, cut, timed out) is not timed.
    this.stopWaiting();
    this.reader = reusable ? this.reader : undefined;
    this.release(this, reusable && !this.dead);
  }
}
