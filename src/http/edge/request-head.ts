import type { IncomingHttpHeaders } from 'node:http';
import { CONTENT_LENGTH_DIGITS, headerNameAt } from '../../lib/http-syntax.js';

/**
 * A request the edge serves itself: an inference call with a JSON body of known length. Anything
 * else is handed to node:http, which parses, answers or refuses it as it always has.
 */
export interface ServedRequestHead {
  kind: 'serve';
  path: string;
  headers: IncomingHttpHeaders;
  bodyLength: number;
  /** The client asked for the connection to close after the answer (`Connection: close`). */
  closeAfter: boolean;
}

export interface HandedOverRequestHead {
  kind: 'hand-over';
  /** Why, for tests and debugging. */
  reason: string;
}

export type RequestHead = ServedRequestHead | HandedOverRequestHead;

export interface RequestHeadRules {
  /** Whether the edge serves this exact path (no query string). */
  servesPath(path: string): boolean;
  /** Bodies over this are left to node:http, whose route answers 413 and closes the connection. */
  bodyLimitBytes: number;
}

const REQUEST_LINE_START = 'POST /';
const REQUEST_LINE_END = ' HTTP/1.1';
/** Control characters other than horizontal tab, which a header value may not hold (RFC 9110 §5.5). */
const INVALID_VALUE_CHARACTER = /[\x00-\x08\x0a-\x1f\x7f]/;

const handOver = (reason: string): HandedOverRequestHead => ({ kind: 'hand-over', reason });

/**
 * Reads a request head (the text before the blank line, as latin1) and decides who serves it. The
 * edge takes only the narrow, common shape of an inference call: `POST <known path> HTTP/1.1`,
 * well-formed headers each given once, a Host, a JSON content type and a Content-Length within
 * the body limit. Everything else (chunked bodies, `Expect`, upgrades, HTTP/1.0, repeated or odd
 * headers, other paths and methods) goes to node:http, so the edge never has to be as lenient or
 * as complete as a general HTTP parser: what it does not take is answered exactly as before.
 */
export function readRequestHead(text: string, rules: RequestHeadRules): RequestHead {
  let lineEnd = text.indexOf('\r\n');
  if (lineEnd < 0) lineEnd = text.length;
  if (!text.startsWith(REQUEST_LINE_START) || !text.startsWith(REQUEST_LINE_END, lineEnd - REQUEST_LINE_END.length)) {
    return handOver('not a POST over HTTP/1.1');
  }
  const path = text.slice(REQUEST_LINE_START.length - 1, lineEnd - REQUEST_LINE_END.length);
  if (!rules.servesPath(path)) return handOver('not an inference path');

  const headers: IncomingHttpHeaders = {};
  while (lineEnd < text.length) {
    const start = lineEnd + 2;
    lineEnd = text.indexOf('\r\n', start);
    if (lineEnd < 0) lineEnd = text.length;
    const colon = text.indexOf(':', start);
    if (colon <= start || colon > lineEnd) return handOver('a header line without a name');
    const name = headerNameAt(text, start, colon);
    if (name === undefined) return handOver('a header name that is not a token');
    if (headers[name] !== undefined) return handOver('a repeated header');
    const value = trimWhitespace(text.slice(colon + 1, lineEnd));
    if (INVALID_VALUE_CHARACTER.test(value)) return handOver('a control character in a header value');
    headers[name] = value;
  }

  if (headers.host === undefined) return handOver('no Host header');
  if (headers['transfer-encoding'] !== undefined) return handOver('a transfer coding');
  if (headers.expect !== undefined) return handOver('an Expect header');
  if (headers.upgrade !== undefined) return handOver('an upgrade');
  if (!isJsonContentType(headers['content-type'])) return handOver('not a JSON body');
  const declaredLength = headers['content-length'];
  if (declaredLength === undefined) return handOver('no Content-Length');
  if (!CONTENT_LENGTH_DIGITS.test(declaredLength)) return handOver('a Content-Length that is not a number');
  const bodyLength = Number(declaredLength);
  if (bodyLength > rules.bodyLimitBytes) return handOver('a body over the limit');
  let closeAfter = false;
  const connection = headers.connection;
  // `keep-alive`, what nearly every client sends, is read without splitting it.
  if (connection !== undefined && connection !== 'keep-alive') {
    for (const token of connection.toLowerCase().split(',')) {
      const option = token.trim();
      if (option === 'close') closeAfter = true;
      else if (option === 'upgrade') return handOver('an upgrade');
    }
  }
  return { kind: 'serve', path, headers, bodyLength, closeAfter };
}

/** `application/json`, with or without parameters (`; charset=utf-8`), as Fastify's parser matches it. */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  if (header === 'application/json') return true;
  const semicolon = header.indexOf(';');
  return (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase() === 'application/json';
}

/** Optional white space around a field value is spaces and tabs only (RFC 9110 §5.6.3), not what String.trim takes. */
function trimWhitespace(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value.charCodeAt(start) === 32 || value.charCodeAt(start) === 9)) start++;
  while (end > start && (value.charCodeAt(end - 1) === 32 || value.charCodeAt(end - 1) === 9)) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}
