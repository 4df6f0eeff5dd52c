import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readRequestHead, type RequestHeadRules } from './request-head.js';

const rules: RequestHeadRules = { servesPath: (path) => path === '/v1/chat/completions', bodyLimitBytes: 1000 };

/** A head as a client sends it, without the blank line that ends it. */
const head = (requestLine: string, ...fields: string[]) => [requestLine, ...fields].join('\r\n');
const usual = ['Host: gw', 'Content-Type: application/json', 'Content-Length: 12'];

describe('readRequestHead', () => {
  test('an inference call with a JSON body of known length is served, its headers as node:http gives them', () => {
    const read = readRequestHead(head('POST /v1/chat/completions HTTP/1.1', 'Host: gw', 'Authorization:  Bearer sk-gw-x \t', 'Content-Type: application/json; charset=utf-8', 'Content-Length: 12', 'X-Empty:'), rules);
    assert.deepEqual(read, {
      kind: 'serve',
      path: '/v1/chat/completions',
      headers: { host: 'gw', authorization: 'Bearer sk-gw-x', 'content-type': 'application/json; charset=utf-8', 'content-length': '12', 'x-empty': '' },
      bodyLength: 12,
      closeAfter: false,
    });
  });

  test('Connection: close is honoured; keep-alive is the default', () => {
    const closing = readRequestHead(head('POST /v1/chat/completions HTTP/1.1', ...usual, 'Connection: keep-alive, Close'), rules);
    assert.equal(closing.kind === 'serve' && closing.closeAfter, true);
  });

  test('Connection: keep-alive, in any case, keeps the connection open', () => {
    for (const value of ['keep-alive', 'Keep-Alive', 'keep-alive, x-other']) {
      const read = readRequestHead(head('POST /v1/chat/completions HTTP/1.1', ...usual, `Connection: ${value}`), rules);
      assert.equal(read.kind === 'serve' && read.closeAfter, false, value);
    }
  });

  test('common header names are read in any case, other names too', () => {
    const read = readRequestHead(head('POST /v1/chat/completions HTTP/1.1', 'HOST: gw', 'content-TYPE: application/json', 'Content-Length: 12', 'User-Agent: sdk', 'X-Trace: 1'), rules);
    assert.deepEqual(read.kind === 'serve' && read.headers, { host: 'gw', 'content-type': 'application/json', 'content-length': '12', 'user-agent': 'sdk', 'x-trace': '1' });
  });

  test('header values keep bytes past ASCII as latin1 characters, as node:http does', () => {
    const read = readRequestHead(head('POST /v1/chat/completions HTTP/1.1', ...usual, 'X-Name: caf\xc3\xa9'), rules);
    assert.equal(read.kind === 'serve' && read.headers['x-name'], 'caf\xc3\xa9');
  });

  const handedOver: Array<[string, string]> = [
    ['another method', head('GET /v1/chat/completions HTTP/1.1', ...usual)],
    ['another path', head('POST /v1/models HTTP/1.1', ...usual)],
    ['a query string', head('POST /v1/chat/completions?x=1 HTTP/1.1', ...usual)],
    ['HTTP/1.0', head('POST /v1/chat/completions HTTP/1.0', ...usual)],
    ['a malformed request line', head('POST  /v1/chat/completions HTTP/1.1', ...usual)],
    ['no Host', head('POST /v1/chat/completions HTTP/1.1', 'Content-Type: application/json', 'Content-Length: 12')],
    ['chunked', head('POST /v1/chat/completions HTTP/1.1', 'Host: gw', 'Content-Type: application/json', 'Transfer-Encoding: chunked')],
    ['both lengths', head('POST /v1/chat/completions HTTP/1.1', ...usual, 'Transfer-Encoding: chunked')],
    ['a repeated Content-Length', head('POST /v1/chat/completions HTTP/1.1', ...usual, 'Content-Length: 12')],
    ['a repeated header of any name', head('POST /v1/chat/completions HTTP/1.1', ...usual, 'X-A: 1', 'x-a: 2')],
    ['a Content-Length that is not a number', head('POST /v1/chat/completions HTTP/1.1', 'Host: gw', 'Content-Type: application/json', 'Content-Length: 1e3')],
    ['no Content-Length', head('POST /v1/chat/completions HTTP/1.1', 'Host: gw', 'Content-Type: application/json')],
    ['a body over the limit', head('POST /v1/chat/completions HTTP/1.1', 'Host: gw', 'Content-Type: application/json', 'Content-Length: 1001')],
    ['another content type', head('POST /v1/chat/completions HTTP/1.1', 'Host: gw', 'Content-Type: multipart/form-data; boundary=x', 'Content-Length: 12')],
    ['Expect: 100-continue', head('POST /v1/chat/completions HTTP/1.1', ...usual, 'Expect: 100-continue')],
    ['an upgrade', head('POST /v1/chat/completions HTTP/1.1', ...usual, 'Connection: Upgrade', 'Upgrade: websocket')],
    ['a folded header line', head('POST /v1/chat/completions HTTP/1.1', ...usual, 'X-A: 1', ' 2')],
    ['a line without a colon', head('POST /v1/chat/completions HTTP/1.1', ...usual, 'X-A')],
    ['white space before the colon', head('POST /v1/chat/completions HTTP/1.1', ...usual, 'X-A : 1')],
    ['a control character in a value', head('POST /v1/chat/completions HTTP/1.1', ...usual, 'X-A: 1\x002')],
    ['a bare line feed', head('POST /v1/chat/completions HTTP/1.1', ...usual, 'X-A: 1\nX-B: 2')],
    ['__proto__', head('POST /v1/chat/completions HTTP/1.1', ...usual, '__proto__: x')],
    ['a carriage return inside a common name', head('POST /v1/chat/completions HTTP/1.1', 'Host: gw', 'Content\rType: application/json', 'Content-Length: 12')],
  ];
  for (const [what, text] of handedOver) {
    test(`handed to node:http: ${what}`, () => {
      assert.equal(readRequestHead(text, rules).kind, 'hand-over');
    });
  }
});
