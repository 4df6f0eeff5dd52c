import type { IncomingHttpHeaders } from 'node:http';
import { CONTENT_LENGTH_DIGITS, headerNameAt } from '../../lib/http-syntax.js';

/** Response heads larger than this are refused (undici's and Node's default limits are similar). */
const MAX_HEAD_BYTES = 64 * 1024;
const CRLF_CRLF = Buffer.from('\r\n\r\n', 'latin1');
const STATUS_LINE_START = 'HTTP/1.';
/** Where the minor version's digit is in a status line (`HTTP/1.1 200 OK`). */
const HTTP_MINOR_VERSION_AT = STATUS_LINE_START.length;
const ZERO = 0x30;
const SPACE = 0x20;

/** A response the upstream sent that HTTP/1.1 does not allow (the connection is then dropped). */
export class MalformedResponseError extends Error {
  readonly code = 'GW_MALFORMED_UPSTREAM_RESPONSE';
}

type Framing = 'none' | 'length' | 'chunked' | 'close';
type ChunkState = 'size' | 'data' | 'data-end' | 'trailers';

/**
 * Told of a streamed response as it is read: its head once complete (1xx interim answers are not
 * told), then each part of its body, de-chunked, as it arrives. A reader given one keeps no body.
 */
export interface ResponseListener {
  onHead(): void;
  onBodyPart(part: Buffer): void;
}

/**
 * Reads one HTTP/1.1 response, fed the connection's bytes as they arrive, and keeps its body in
 * memory (or hands each part to a `ResponseListener` instead). Framing follows RFC 9112 §6: no
 * body for HEAD, 1xx, 204 and 304; chunked when it is the last transfer coding; otherwise
 * Content-Length; otherwise the body runs to the connection's end.
 * 1xx interim answers (100 Continue, 103 Early Hints) are skipped. A reader is used for one
 * response; `reusable` says whether the connection may carry the next request.
 */
export class Http1ResponseReader {
  statusCode = 0;
  headers: IncomingHttpHeaders = {};
  /** True once the head has been read. */
  headComplete = false;
  /** True once the whole response has been read. */
  complete = false;
  /** Whether the connection may serve another request once this response is complete. */
  reusable = true;
  /** `Keep-Alive: timeout=N` of the response, in ms (undefined when absent). */
  keepAliveHintMs: number | undefined;

  private head: Buffer | undefined;
  private framing: Framing = 'none';
  private remaining = 0;
  private chunkState: ChunkState = 'size';
  private line = '';
  private readonly parts: Buffer[] = [];
  private length = 0;

  constructor(
    private readonly method: string,
    private readonly listener?: ResponseListener,
  ) {}

  /** Bytes of body read so far. */
  get bodyBytes(): number {
    return this.length;
  }

  /** The body read so far, in one buffer (empty when a listener took the parts). */
  body(): Buffer {
    return this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.length);
  }

  /**
   * Consumes bytes of the connection. Returns true when the response is complete; bytes after its
   * end (which a server may not send before it has a request) mark the connection not reusable.
   * Throws MalformedResponseError on a response HTTP/1.1 does not allow.
   */
  push(chunk: Buffer): boolean {
    let offset = 0;
    while (offset < chunk.length && !this.complete) {
      offset = this.headComplete ? this.pushBody(chunk, offset) : this.pushHead(chunk, offset);
    }
    if (this.complete && offset < chunk.length) this.reusable = false;
    return this.complete;
  }

  /** The connection ended: completes a body that runs to the end, fails anything else unfinished. */
  end(): boolean {
    if (this.complete) return true;
    if (this.headComplete && this.framing === 'close') {
      this.complete = true;
      return true;
    }
    return false;
  }

  private pushHead(chunk: Buffer, offset: number): number {
    const searchFrom = this.head ? Math.max(0, this.head.length - 3) : 0;
    const buffer = this.head ? Buffer.concat([this.head, chunk.subarray(offset)]) : offset === 0 ? chunk : chunk.subarray(offset);
    const end = buffer.indexOf(CRLF_CRLF, searchFrom);
    if (end < 0) {
      if (buffer.length > MAX_HEAD_BYTES) throw new MalformedResponseError('response head too large');
      // Copied: the chunk's memory belongs to the socket's read, and only the head's bytes are kept.
      this.head = Buffer.from(buffer);
      return chunk.length;
    }
    if (end > MAX_HEAD_BYTES) throw new MalformedResponseError('response head too large');
    const consumedFromChunk = end + 4 - (this.head?.length ?? 0);
    this.head = undefined;
    this.parseHead(buffer.toString('latin1', 0, end));
    // Told once the framing is known (a 204 is already complete), before any part of the body.
    if (this.headComplete) this.listener?.onHead();
    return offset + consumedFromChunk;
  }

  private parseHead(text: string): void {
    let lineEnd = text.indexOf('\r\n');
    if (lineEnd < 0) lineEnd = text.length;
    const statusCode = statusCodeOf(text, lineEnd);
    if (statusCode === undefined) throw new MalformedResponseError(`bad status line: ${JSON.stringify(text.slice(0, Math.min(lineEnd, 80)))}`);
    const headers: Record<string, string | string[]> = {};
    while (lineEnd < text.length) {
      const start = lineEnd + 2;
      lineEnd = text.indexOf('\r\n', start);
      if (lineEnd < 0) lineEnd = text.length;
      const colon = text.indexOf(':', start);
      const first = text.charCodeAt(start);
      // Obsolete line folding (a line starting with white space) and lines without a name are refused.
      if (colon <= start || colon > lineEnd || first === 32 || first === 9) throw new MalformedResponseError('bad header line');
      const name = headerNameAt(text, start, colon);
      if (name === undefined) throw new MalformedResponseError('bad header name');
      appendHeader(headers, name, text.slice(colon + 1, lineEnd).trim());
    }
    if (statusCode < 200) {
      // 101 would switch protocols, which a request from here never asks for.
      if (statusCode === 101) throw new MalformedResponseError('unexpected 101 Switching Protocols');
      return; // an interim answer: the real one follows
    }
    this.statusCode = statusCode;
    this.headers = headers;
    this.headComplete = true;
    if (text.charCodeAt(HTTP_MINOR_VERSION_AT) === ZERO || hasToken(headers.connection, 'close')) this.reusable = false;
    if (headers['keep-alive'] !== undefined) {
      const keepAlive = /timeout=(\d+)/i.exec(String(headers['keep-alive']));
      if (keepAlive) this.keepAliveHintMs = Number(keepAlive[1]) * 1000;
    }

    if (this.method === 'HEAD' || statusCode === 204 || statusCode === 304) return this.finish();
    const transferEncoding = headers['transfer-encoding'];
    if (transferEncoding !== undefined) {
      const codings = String(transferEncoding).toLowerCase().split(',');
      // With both headers the length is ignored, and the connection is not trusted for another request.
      if (headers['content-length'] !== undefined) this.reusable = false;
      if (codings[codings.length - 1]!.trim() === 'chunked') {
        this.framing = 'chunked';
        return;
      }
      this.framing = 'close';
      this.reusable = false;
      return;
    }
    const contentLength = headers['content-length'];
    if (contentLength !== undefined) {
      this.remaining = parseContentLength(contentLength);
      if (this.remaining === 0) return this.finish();
      this.framing = 'length';
      return;
    }
    this.framing = 'close';
    this.reusable = false;
  }

  private pushBody(chunk: Buffer, offset: number): number {
    if (this.framing === 'close') {
      this.keep(offset === 0 ? chunk : chunk.subarray(offset));
      return chunk.length;
    }
    if (this.framing === 'length') {
      const take = Math.min(this.remaining, chunk.length - offset);
      this.keep(take === chunk.length ? chunk : chunk.subarray(offset, offset + take));
      this.remaining -= take;
      if (this.remaining === 0) this.finish();
      return offset + take;
    }
    return this.pushChunked(chunk, offset);
  }

  private pushChunked(chunk: Buffer, offset: number): number {
    if (this.chunkState === 'data') {
      const take = Math.min(this.remaining, chunk.length - offset);
      this.keep(chunk.subarray(offset, offset + take));
      this.remaining -= take;
      if (this.remaining === 0) this.chunkState = 'data-end';
      return offset + take;
    }
    // Size lines, the CRLF after data and trailers are read line by line.
    const newline = chunk.indexOf(10, offset);
    const upTo = newline < 0 ? chunk.length : newline + 1;
    this.line += chunk.toString('latin1', offset, upTo);
    if (this.line.length > 8 * 1024) throw new MalformedResponseError('chunk line too long');
    if (newline < 0) return upTo;
    const line = this.line.endsWith('\r\n') ? this.line.slice(0, -2) : this.line.slice(0, -1);
    this.line = '';
    if (this.chunkState === 'data-end') {
      if (line !== '') throw new MalformedResponseError('chunk data longer than its size');
      this.chunkState = 'size';
    } else if (this.chunkState === 'size') {
      const size = /^([0-9a-fA-F]{1,12})[ \t]*(?:;.*)?$/.exec(line);
      if (!size) throw new MalformedResponseError('bad chunk size');
      this.remaining = parseInt(size[1]!, 16);
      this.chunkState = this.remaining === 0 ? 'trailers' : 'data';
    } else if (line === '') {
      this.finish(); // the empty line after the last chunk's trailers
    }
    return upTo;
  }

  private keep(part: Buffer): void {
    if (part.length === 0) return;
    this.length += part.length;
    // The part is a view of the socket's read, whose memory no later read reuses: safe to hand on.
    if (this.listener) this.listener.onBodyPart(part);
    else this.parts.push(part);
  }

  private finish(): void {
    this.complete = true;
  }
}

/**
 * The status code of a status line (`HTTP/1.1 200 OK`: the text up to `lineEnd`), or undefined
 * when it is not one: HTTP/1.0 or 1.1, a space, three digits, then nothing or a space and a reason
 * phrase without line breaks. Read in place: a regular expression's match cost an array and three
 * strings a response.
 */
function statusCodeOf(text: string, lineEnd: number): number | undefined {
  const codeAt = HTTP_MINOR_VERSION_AT + 2;
  if (lineEnd < codeAt + 3 || !text.startsWith(STATUS_LINE_START)) return undefined;
  const minor = text.charCodeAt(HTTP_MINOR_VERSION_AT);
  if ((minor !== ZERO && minor !== ZERO + 1) || text.charCodeAt(codeAt - 1) !== SPACE) return undefined;
  let code = 0;
  for (let index = codeAt; index < codeAt + 3; index++) {
    const digit = text.charCodeAt(index) - ZERO;
    if (digit < 0 || digit > 9) return undefined;
    code = code * 10 + digit;
  }
  if (lineEnd === codeAt + 3) return code;
  if (text.charCodeAt(codeAt + 3) !== SPACE) return undefined;
  for (let index = codeAt + 4; index < lineEnd; index++) {
    const character = text.charCodeAt(index);
    if (character === 0x0a || character === 0x0d) return undefined;
  }
  return code;
}

/** Adds a header value as Node presents headers: a repeated header becomes an array of its values in order. */
export function appendHeader(headers: Record<string, string | string[]>, name: string, value: string): void {
  const seen = headers[name];
  if (seen === undefined) headers[name] = value;
  else if (Array.isArray(seen)) seen.push(value);
  else headers[name] = [seen, value];
}

/** One length, however often it is repeated (RFC 9110 §8.6); anything else is refused. */
function parseContentLength(value: string | string[]): number {
  if (typeof value === 'string' && CONTENT_LENGTH_DIGITS.test(value)) return Number(value);
  const distinct = new Set((Array.isArray(value) ? value : [value]).flatMap((entry) => entry.split(',').map((part) => part.trim())));
  const [only] = distinct;
  if (distinct.size !== 1 || !CONTENT_LENGTH_DIGITS.test(only!)) throw new MalformedResponseError('bad content-length');
  return Number(only);
}

function hasToken(value: string | string[] | undefined, token: string): boolean {
  if (value === undefined) return false;
  const lower = String(value).toLowerCase();
  if (lower === token) return true;
  if (!lower.includes(token)) return false; // the usual case (keep-alive), without a split
  return lower.split(',').some((part) => part.trim() === token);
}
