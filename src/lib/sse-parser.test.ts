import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createSseParser } from './sse-parser.js';

test('parses events split at every byte, with CRLF, comments and multi-line data', () => {
  const text = ': comment\r\nevent: message_start\r\ndata: {"a":1}\r\n\r\ndata: line1\ndata: line2\n\ndata: é€😀\r\r';
  const bytes = Buffer.from(text);
  const parser = createSseParser();
  const events = [];
  for (const byte of bytes) events.push(...parser.push(Uint8Array.of(byte)));
  events.push(...parser.end());
  assert.deepEqual(events, [
    { event: 'message_start', data: '{"a":1}' },
    { data: 'line1\nline2' },
    { data: 'é€😀' },
  ]);
});

test('dispatches a trailing event without blank line at end', () => {
  const parser = createSseParser();
  assert.deepEqual(parser.push('data: [DONE]'), []);
  assert.deepEqual(parser.end(), [{ data: '[DONE]' }]);
});

test('every split of a stream gives the events of the whole, with LF-only lines (the fast path), CRLF, and a CR at a chunk end followed by LF', () => {
  const lfOnly = 'id: 7\nevent: delta\ndata: {"x":"a:b"}\n\n: keep-alive\ndata:no-space\ndata:  two spaces\n\ndata: [DONE]\n\n';
  const mixed = 'data: one\r\n\r\ndata: two\n\ndata: three\r\rdata: four\r\n\r\n';
  for (const text of [lfOnly, mixed]) {
    const whole = createSseParser();
    const expected = [...whole.push(text), ...whole.end()];
    assert.ok(expected.length >= 3);
    for (let first = 0; first <= text.length; first++) {
      for (const second of [first, Math.min(text.length, first + 1), Math.min(text.length, first + 7)]) {
        const parser = createSseParser();
        const events = [
          ...parser.push(Buffer.from(text.slice(0, first))),
          ...parser.push(Buffer.from(text.slice(first, second))),
          ...parser.push(Buffer.from(text.slice(second))),
          ...parser.end(),
        ];
        assert.deepEqual(events, expected, `split at ${first} and ${second}`);
      }
    }
  }
  const parser = createSseParser();
  assert.deepEqual([...parser.push(lfOnly), ...parser.end()], [
    { event: 'delta', data: '{"x":"a:b"}', id: '7' },
    { data: 'no-space\n two spaces', id: '7' },
    { data: '[DONE]', id: '7' },
  ]);
  const crAtEnd = createSseParser();
  assert.deepEqual(crAtEnd.push('data: a\r'), []);
  assert.deepEqual(crAtEnd.push('\n\ndata: b\n\n'), [{ data: 'a' }, { data: 'b' }]);
});
