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
