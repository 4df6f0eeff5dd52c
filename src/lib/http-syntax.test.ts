import assert from 'node:assert/strict';
import { test } from 'node:test';
import { headerNameAt } from './http-syntax.js';

/** The name in a header line, read as the parsers read it: from the line's start up to its colon. */
const nameOf = (line: string) => headerNameAt(`\r\n${line}`, 2, 2 + line.indexOf(':'));

test('header names: common names in any case come back lower case, as other names do', () => {
  assert.equal(nameOf('Content-Type: application/json'), 'content-type');
  assert.equal(nameOf('HOST: gw'), 'host');
  assert.equal(nameOf('authorization: Bearer x'), 'authorization');
  assert.equal(nameOf('X-Stainless-Package-Version: 4.0.0'), 'x-stainless-package-version');
  assert.equal(nameOf('X-Custom-Thing: 1'), 'x-custom-thing');
  assert.equal(nameOf("A!#$%&'*+-.^_`|~9: 1"), "a!#$%&'*+-.^_`|~9");
});

test('header names: a name of a common length that differs by punctuation or a control character is not taken for the common one', () => {
  // Same length as content-type / keep-alive / host: each is read as what it spells.
  assert.equal(nameOf('Content_Type: x'), 'content_type');
  assert.equal(nameOf('Keep.Alive: x'), 'keep.alive');
  // A carriage return would fold onto "-" and a 0x10-0x19 byte onto a digit with a plain "| 0x20".
  assert.equal(nameOf('Content\rType: x'), undefined);
  assert.equal(nameOf('x-request-i\x04: x'), undefined);
  assert.equal(nameOf('@ost: x'), undefined);
  assert.equal(nameOf('Ho t: x'), undefined);
});

test('header names: what is not a token, and __proto__, are refused', () => {
  assert.equal(nameOf('X A: 1'), undefined);
  assert.equal(nameOf('X(A): 1'), undefined);
  assert.equal(nameOf('__proto__: x'), undefined);
  assert.equal(nameOf('__PROTO__: x'), undefined);
  assert.equal(headerNameAt('Host', 0, 0), undefined);
});
