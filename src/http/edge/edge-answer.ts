import { EventEmitter } from 'node:events';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { HEADER_NAME, headAndBody } from '../../lib/http-syntax.js';
import type { AnswerStream } from '../answer-stream.js';

/** Characters a header value may hold when written (node:http's rule: tab, visible ASCII, obs-text). */
const INVALID_HEADER_CHARACTER = /[^\t\x20-\x7e\x80-\xff]/;

/** What the connection tells its answer, and is told by it. */
export interface AnswerConnection {
  readonly socket: Socket;
  /** `Keep-Alive: timeout=N` announced on kept connections, in seconds. */
  readonly keepAliveSeconds: number;
  /** Whether this connection closes after the answer (the client asked, or the gateway is stopping). */
  closesAfterAnswer(): boolean;
  /** The answer's last bytes were handed to the socket. */
  answerFinished(answer: EdgeAnswer, closeConnection: boolean): void;
}

/**
 * A whole answer up to this size goes out as one buffer, head and body copied together: one plain
 * write instead of a corked pair, which Node sends through its writev path (an array of chunks, a
 * write request for them, the pair gathered again in C++). Larger bodies are not worth the copy.
 */
const JOINED_WRITE_MAX_BYTES = 64 * 1024;

let cachedDate = '';
let cachedDateSecond = -1;

/** The Date header, formatted once a second as node:http does. */
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== cachedDateSecond) {
    cachedDateSecond = second;
    cachedDate = new Date(now).toUTCString();
  }
  return cachedDate;
}

/**
 * Header names already found to be tokens: the handful an answer carries recur on every call. Bounded, so
 * names made from input cannot grow it without end (past the bound a name is just tested again).
 */
const checkedNames = new Set<string>();
const CHECKED_NAMES_MAX = 256;

function checkedHeader(name: string, value: string | number): string {
  const text = typeof value === 'number' ? String(value) : value;
  if (!checkedNames.has(name)) {
    if (!HEADER_NAME.test(name)) throw new TypeError(`Invalid header name: ${JSON.stringify(name)}`);
    if (checkedNames.size < CHECKED_NAMES_MAX) checkedNames.add(name);
  }
  if (INVALID_HEADER_CHARACTER.test(text)) throw new TypeError(`Invalid character in header content ["${name}"]`);
  return text;
}

/**
 * One answer written straight to the socket: the head and a JSON body in one write, or a stream
 * in chunked transfer coding with its trailers. It behaves as node:http's ServerResponse does for
 * what the handlers use (AnswerStream): headers gathered until the first write, Date and
 * Connection added, a body given only to `end()` sent with its Content-Length, 'drain' and
 * 'close' events, `destroyed` once the socket is gone.
 */
export class EdgeAnswer extends EventEmitter implements AnswerStream {
  statusCode = 200;
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  private fields: Record<string, string | number> = {};
  private chunked = false;
  private closeConnection = false;
  private trailers = '';
  private closed = false;

  constructor(private readonly connection: AnswerConnection) {
    super();
  }

  get destroyed(): boolean {
    return this.connection.socket.destroyed;
  }

  setHeader(name: string, value: string | number): this {
    this.fields[name.toLowerCase()] = value;
    return this;
  }

  writeHead(statusCode: number, headers: Record<string, string | number>): this {
    this.statusCode = statusCode;
    for (const name in headers) this.fields[name.toLowerCase()] = headers[name]!;
    return this;
  }

  write(chunk: string | Buffer): boolean {
    if (this.writableEnded || this.destroyed) return false;
    const length = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    if (!this.headersSent) return this.send(this.head(), chunk, length);
    return this.send('', chunk, length);
  }

  end(chunk?: string | Buffer): this {
    if (this.writableEnded) return this;
    if (this.destroyed) {
      this.writableEnded = true;
      return this;
    }
    const length = chunk === undefined ? 0 : typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    let head = '';
    if (!this.headersSent) {
      // As node:http: a body given whole to end() goes with its length, not chunked.
      if (this.fields['content-length'] === undefined) this.fields['content-length'] = length;
      head = this.head();
    }
    this.writableEnded = true;
    const socket = this.connection.socket;
    const finished = () => this.finish();
    if (!this.chunked) {
      if (chunk === undefined || length === 0) socket.write(head, 'latin1', finished);
      else if (typeof chunk === 'string') socket.write(head + chunk, 'utf8', finished);
      else if (length <= JOINED_WRITE_MAX_BYTES) socket.write(headAndBody(head, chunk, length), finished);
      else {
        socket.cork();
        socket.write(head, 'latin1');
        socket.write(chunk, finished);
        socket.uncork();
      }
      return this;
    }
    if (chunk !== undefined && length > 0) this.send('', chunk, length);
    socket.write(`0\r\n${this.trailers}\r\n`, 'latin1', finished);
    return this;
  }

  addTrailers(headers: Record<string, string>): void {
    for (const name in headers) this.trailers += `${name}: ${checkedHeader(name, headers[name]!)}\r\n`;
  }

  destroy(): this {
    this.connection.socket.destroy();
    return this;
  }

  /** The socket closed: before the answer finished, that is the client going away. */
  socketClosed(): void {
    if (this.closed) return;
    this.closed = true;
    this.emit('close');
  }

  private finish(): void {
    this.writableFinished = true;
    this.emit('finish');
    this.connection.answerFinished(this, this.closeConnection);
    this.socketClosed();
  }

  private send(head: string, chunk: string | Buffer, length: number): boolean {
    const socket = this.connection.socket;
    if (!this.chunked) {
      if (typeof chunk === 'string') return socket.write(head + chunk, 'utf8');
      if (head === '') return socket.write(chunk);
      socket.cork();
      socket.write(head, 'latin1');
      const accepted = socket.write(chunk);
      socket.uncork();
      return accepted;
    }
    if (length === 0) return head === '' ? true : socket.write(head, 'latin1');
    if (typeof chunk === 'string') return socket.write(`${head}${length.toString(16)}\r\n${chunk}\r\n`, 'utf8');
    socket.cork();
    socket.write(`${head}${length.toString(16)}\r\n`, 'latin1');
    socket.write(chunk);
    const accepted = socket.write('\r\n', 'latin1');
    socket.uncork();
    return accepted;
  }

  /** The status line and headers, marked sent. */
  private head(): string {
    const fields = this.fields;
    let head = `HTTP/1.1 ${this.statusCode} ${STATUS_CODES[this.statusCode] ?? 'unknown'}\r\n`;
    for (const name in fields) head += `${name}: ${checkedHeader(name, fields[name]!)}\r\n`;
    if (fields.date === undefined) head += `date: ${httpDate()}\r\n`;
    const asked = fields.connection === undefined ? undefined : String(fields.connection).toLowerCase();
    this.closeConnection = asked === 'close' || this.connection.closesAfterAnswer();
    if (this.closeConnection) {
      if (asked !== 'close') head += 'connection: close\r\n';
    } else if (asked === undefined) {
      head += `connection: keep-alive\r\nkeep-alive: timeout=${this.connection.keepAliveSeconds}\r\n`;
    }
    // As node:http: without a length the body is chunked (end() gives a whole body its length first).
    this.chunked = fields['content-length'] === undefined;
    if (this.chunked) head += 'transfer-encoding: chunked\r\n';
    // Only now: a header that cannot be written throws before anything is sent, as in node:http,
    // so the error answer can still be given.
    this.headersSent = true;
    return `${head}\r\n`;
  }
}
