import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasObjectValue, nextStringValue, stringLiteralText } from './json-text-scan.js';

function valueOf(text: string, quotedKey: string, from = 0): string | undefined {
  const span = nextStringValue(text, quotedKey, from);
  return span && stringLiteralText(text, span);
}

test('a string value ends at its closing quote, not at an escaped one', () => {
  const text = '{"arguments":"{\\"city\\":\\"Paris\\"}","name":"f"}';
  const span = nextStringValue(text, '"arguments"');
  assert.ok(span);
  assert.equal(span.escaped, true);
  assert.equal(text.slice(span.start, span.end), '"{\\"city\\":\\"Paris\\"}"');
  assert.equal(stringLiteralText(text, span), '{"city":"Paris"}');
  assert.equal(valueOf(text, '"name"', span.end), 'f');
});

test('an escaped backslash before the closing quote ends the value there', () => {
  const text = '{"a":"C:\\\\","b":"x"}';
  assert.equal(valueOf(text, '"a"'), 'C:\\');
  assert.equal(valueOf(text, '"b"'), 'x');
});

test('escapes are decoded; a value without escapes is sliced; a malformed escape is kept as written', () => {
  assert.equal(valueOf('{"t":"caf\\u00e9 \\ud83d\\ude00\\n\\/"}', '"t"'), 'café 😀\n/');
  const plain = '{"t": "plain text"}';
  const span = nextStringValue(plain, '"t"');
  assert.equal(span?.escaped, false);
  assert.equal(valueOf(plain, '"t"'), 'plain text');
  assert.equal(valueOf('{"t":"bad \\q"}', '"t"'), 'bad \\q');
});

test('keys with other values, the key as a string value, and keys before `from` are passed over', () => {
  const text = '{"content":null,"kind":"content","content":[1],"content" : "late"}';
  assert.equal(valueOf(text, '"content"'), 'late');
  const first = '{"k":"one","k":"two"}';
  const span = nextStringValue(first, '"k"');
  assert.equal(valueOf(first, '"k"', span!.end), 'two');
  assert.equal(nextStringValue('{"k":"unterminated', '"k"'), undefined);
  assert.equal(nextStringValue('{"other":"v"}', '"k"'), undefined);
});

test('the same scan reads UTF-8 bytes', () => {
  const bytes = Buffer.from('{"model":"gpt-\\"x\\"","n":1}', 'utf8');
  const span = nextStringValue(bytes, '"model"');
  assert.ok(span);
  assert.equal(span.escaped, true);
  assert.equal(bytes.subarray(span.start, span.end).toString('utf8'), '"gpt-\\"x\\""');
});

test('an object value is told apart from other values of the key', () => {
  assert.equal(hasObjectValue('{"usage": {"prompt_tokens":1}}', '"usage"'), true);
  assert.equal(hasObjectValue('{"usage":null,"x":"usage"}', '"usage"'), false);
});
