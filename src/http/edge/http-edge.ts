import { channel } from 'node:diagnostics_channel';
import { maxHeaderSize as defaultMaxHeaderSize, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { EdgeAnswer, type AnswerConnection } from './edge-answer.js';
import { readRequestHead, type RequestHeadRules, type ServedRequestHead } from './request-head.js';

const CRLF_CRLF = Buffer.from('\r\n\r\n', 'latin1');
/** How every request the edge takes begins: bytes that begin otherwise are node:http's at once. */
const REQUEST_START = Buffer.from('POST /', 'latin1');
const SWEEP_INTERVAL_MS = 1000;
/**
 * Published as the edge starts serving a call, as node:http publishes `http.server.request.start`
 * for the requests it parses: `{ answer, socket, at }`, `at` being performance.now() when the
 * request's first byte was read, and `answer` emitting 'finish' once written (bench/lib probes).
 */
export const EDGE_REQUEST_START_CHANNEL = 'gw:http:request:start';
const requestStart = channel(EDGE_REQUEST_START_CHANNEL);
const REQUEST_TIMEOUT_ANSWER = 'HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n';

export interface HttpEdgeOptions extends RequestHeadRules {
  /** Runs one served call: its handler writes the answer (its body is the request's bytes, as text). */
  serve(request: ServedRequestHead, body: string, answer: EdgeAnswer, startedAt: number): void;
  /** While the gateway stops, new requests go to node:http (Fastify answers them 503). */
  isClosing(): boolean;
}

export interface HttpEdge {
  /** Closes the connections that wait for a request; the others close once their answer is written. */
  closeIdleConnections(): void;
}

type Phase = 'idle' | 'head' | 'body' | 'answering' | 'closed';

/**
 * gw's HTTP edge: the listening server's connections are read here first, and the calls that make
 * up nearly all of a gateway's traffic (JSON inference calls, readRequestHead) are parsed and
 * answered here, with no IncomingMessage, ServerResponse or stream machinery between the socket
 * and the handler. The first request a connection sends that the edge does not take hands the
 * whole connection, with the bytes already read, to node:http, which serves it and the rest of
 * the connection as before (Fastify's routes, its errors, its 503 while closing). Nothing is
 * answered differently; calls are answered sooner (docs/pipeline.md, "gw's HTTP edge").
 *
 * The edge keeps node:http's timing rules on its own connections: an idle keep-alive connection
 * closes after server.keepAliveTimeout, a request head must arrive within server.headersTimeout
 * and a whole request within server.requestTimeout (else a 408, through the server's 'clientError'
 * listeners as node:http gives it, and the connection closes); checked
 * once a second, not with a timer per request, so up to a second late.
 */
export function installHttpEdge(server: Server, options: HttpEdgeOptions): HttpEdge {
  const listeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  if (listeners.length !== 1) throw new Error(`expected node:http's one connection listener on the server, found ${listeners.length}`);
  const nodeConnectionListener = listeners[0]!;
  server.removeListener('connection', nodeConnectionListener);

  const connections = new Set<EdgeConnection>();
  const settings = {
    // node:http's limit on a request head: a longer one is handed over, and node:http answers 431.
    maxHeadBytes: (server as { maxHeaderSize?: number }).maxHeaderSize ?? defaultMaxHeaderSize,
    /** Seconds since the edge started, advanced by the sweep: what phases are timed with. */
    clock: 0,
  };
  const handOver = (socket: Socket, pending: Buffer | undefined) => {
    // node:http's parser would otherwise read the socket's handle directly and could see bytes that
    // arrive now before the ones given back here; through 'data' events the order is kept.
    const handle = (socket as unknown as { _handle?: { _consumed?: boolean } })._handle;
    if (handle) handle._consumed = true;
    nodeConnectionListener.call(server, socket);
    if (pending !== undefined) socket.unshift(pending);
  };

  class EdgeConnection implements AnswerConnection {
    /** Bytes read and not yet consumed, in the chunks they came in (joined only when a head is read or a body complete). */
    private parts: Buffer[] = [];
    private partsLength = 0;
    private phase: Phase = 'idle';
    private phaseSince = settings.clock;
    private request: ServedRequestHead | undefined;
    private bodyStart = 0;
    private requestStartedAt = 0;
    private answer: EdgeAnswer | undefined;
    private clientEnded = false;
    private readonly onData = (chunk: Buffer) => this.received(chunk);
    private readonly onEnd = () => this.clientFinished();
    private readonly onClose = () => this.closed();
    private readonly onDrain = () => this.answer?.emit('drain');
    private readonly onError = () => {};

    constructor(readonly socket: Socket) {
      socket.on('data', this.onData);
      socket.on('end', this.onEnd);
      socket.on('close', this.onClose);
      socket.on('drain', this.onDrain);
      socket.on('error', this.onError);
    }

    get keepAliveSeconds(): number {
      return Math.floor(server.keepAliveTimeout / 1000);
    }

    closesAfterAnswer(): boolean {
      return this.request?.closeAfter === true || this.clientEnded || options.isClosing();
    }

    answerFinished(answer: EdgeAnswer, closeConnection: boolean): void {
      if (answer !== this.answer) return;
      this.answer = undefined;
      this.request = undefined;
      if (closeConnection) {
        this.phase = 'closed';
        this.socket.end();
        return;
      }
      this.enter('idle');
      if (this.socket.isPaused()) this.socket.resume();
      // A pipelined request already read: served on the next turn, outside the finished handler's stack.
      if (this.partsLength > 0) setImmediate(() => this.phase === 'idle' && this.advance());
    }

    /** Called once a second: closes what has waited longer than node:http would let it. */
    sweep(now: number): void {
      // Whole seconds surely waited: a phase entered between two sweeps counts from the later one,
      // so a timeout fires up to a second late, never early (clients reuse a kept connection until
      // just before the Keep-Alive timeout this gateway announced).
      const waited = now - this.phaseSince - 1;
      if (this.phase === 'idle') {
        // While the gateway stops, a connection accepted after closeIdleConnections ran is closed here.
        if (options.isClosing()) this.closeIfIdle();
        else if (server.keepAliveTimeout > 0 && waited * 1000 >= server.keepAliveTimeout) this.socket.destroy();
      } else if (this.phase === 'head') {
        if (server.headersTimeout > 0 && waited * 1000 >= server.headersTimeout) this.timedOut();
      } else if (this.phase === 'body') {
        if (server.requestTimeout > 0 && waited * 1000 >= server.requestTimeout) this.timedOut();
      }
    }

    closeIfIdle(): void {
      if (this.phase === 'idle' && this.partsLength === 0) this.socket.destroy();
    }

    private received(chunk: Buffer): void {
      this.parts.push(chunk);
      this.partsLength += chunk.length;
      if (this.phase === 'answering') {
        // Pipelined requests wait for the answer in progress; a client that keeps sending is slowed.
        if (this.partsLength > options.bodyLimitBytes + settings.maxHeadBytes) this.socket.pause();
        return;
      }
      if (this.phase !== 'closed') this.advance();
    }

    private advance(): void {
      if (this.partsLength === 0) return;
      if (this.phase === 'idle') {
        this.enter('head');
        this.requestStartedAt = performance.now();
      }
      if (this.phase === 'head') {
        const pending = this.joined()!;
        if (!startsLikeServedRequest(pending)) return this.handOver();
        const headEnd = pending.indexOf(CRLF_CRLF);
        if (headEnd < 0 || headEnd > settings.maxHeadBytes) {
          if (headEnd >= 0 || pending.length > settings.maxHeadBytes) this.handOver();
          return;
        }
        if (options.isClosing()) return this.handOver();
        const head = readRequestHead(pending.toString('latin1', 0, headEnd), options);
        if (head.kind === 'hand-over') return this.handOver();
        this.request = head;
        this.bodyStart = headEnd + 4;
        this.phase = 'body';
      }
      const request = this.request!;
      const bodyEnd = this.bodyStart + request.bodyLength;
      // A large body arrives in many chunks: they are joined once, when all of it is here.
      if (this.partsLength < bodyEnd) return;
      const pending = this.joined()!;
      const body = pending.toString('utf8', this.bodyStart, bodyEnd);
      if (pending.length > bodyEnd) {
        this.parts = [pending.subarray(bodyEnd)];
        this.partsLength = pending.length - bodyEnd;
      } else {
        this.parts = [];
        this.partsLength = 0;
      }
      this.phase = 'answering';
      const answer = new EdgeAnswer(this);
      this.answer = answer;
      if (requestStart.hasSubscribers) requestStart.publish({ answer, socket: this.socket, at: this.requestStartedAt });
      options.serve(request, body, answer, this.requestStartedAt);
    }

    /** The bytes not yet consumed, as one buffer. */
    private joined(): Buffer | undefined {
      if (this.parts.length > 1) this.parts = [Buffer.concat(this.parts, this.partsLength)];
      return this.parts[0];
    }

    private enter(phase: Phase): void {
      this.phase = phase;
      this.phaseSince = settings.clock;
    }

    private handOver(): void {
      const socket = this.socket;
      const pending = this.joined();
      this.detach();
      if (this.clientEnded) {
        // The client's half of the connection has ended, so node:http could not be given its bytes back.
        socket.destroy();
        return;
      }
      handOver(socket, pending);
    }

    /** As node:http: the server's 'clientError' listeners answer (Fastify's gives the gateway's error body), else a bare 408. */
    private timedOut(): void {
      this.phase = 'closed';
      const socket = this.socket;
      if (server.listenerCount('clientError') > 0) {
        server.emit('clientError', Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket);
        return;
      }
      socket.end(REQUEST_TIMEOUT_ANSWER, 'latin1');
      socket.destroySoon();
    }

    private clientFinished(): void {
      this.clientEnded = true;
      // As node:http (without httpAllowHalfOpen): a client that ends its half is gone, and a call
      // under way is abandoned (its answer's 'close' aborts the upstream call); a partial request is dropped.
      if (this.phase === 'head' || this.phase === 'body') this.socket.destroy();
      else this.socket.end();
    }

    private closed(): void {
      this.phase = 'closed';
      this.detach();
      this.answer?.socketClosed();
    }

    private detach(): void {
      const socket = this.socket;
      connections.delete(this);
      this.parts = [];
      this.partsLength = 0;
      socket.off('data', this.onData);
      socket.off('end', this.onEnd);
      socket.off('close', this.onClose);
      socket.off('drain', this.onDrain);
      socket.off('error', this.onError);
    }
  }

  server.on('connection', (socket: Socket) => {
    connections.add(new EdgeConnection(socket));
  });
  const sweeper = setInterval(() => {
    settings.clock += SWEEP_INTERVAL_MS / 1000;
    for (const connection of connections) connection.sweep(settings.clock);
  }, SWEEP_INTERVAL_MS);
  sweeper.unref();
  server.once('close', () => clearInterval(sweeper));

  return {
    closeIdleConnections() {
      for (const connection of connections) connection.closeIfIdle();
    },
  };
}

/** Whether the bytes so far could begin a request the edge takes (`POST /`), so that waiting for the rest of its head makes sense. */
function startsLikeServedRequest(bytes: Buffer): boolean {
  const length = Math.min(bytes.length, REQUEST_START.length);
  for (let index = 0; index < length; index++) if (bytes[index] !== REQUEST_START[index]) return false;
  return true;
}
