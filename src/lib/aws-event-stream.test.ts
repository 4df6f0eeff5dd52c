import assert from 'node:assert/strict';
import { test } from 'node:test';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { createAwsEventStreamDecoder, decodeEventStreamMessage, encodeEventStreamMessage } from './aws-event-stream.js';

const eventHeaders = (type: string) => ({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' });

test('the empty message vector of the event-stream test suite decodes', () => {
  const empty = Buffer.from('000000100000000005c248eb7d98c8ff', 'hex');
  assert.deepEqual(decodeEventStreamMessage(empty), { headers: {}, payload: Buffer.alloc(0) });
  assert.deepEqual(encodeEventStreamMessage({}, ''), empty);
});

test('several messages in one read, and messages split across reads at every byte', () => {
  const stream = Buffer.concat([
    encodeEventStreamMessage(eventHeaders('messageStart'), '{"role":"assistant"}'),
    encodeEventStreamMessage(eventHeaders('contentBlockDelta'), '{"delta":{"text":"héllo"},"contentBlockIndex":0}'),
    encodeEventStreamMessage({ ':exception-type': 'throttlingException', ':message-type': 'exception' }, '{"message":"slow down"}'),
  ]);
  const expected = [
    { event: 'messageStart', data: '{"role":"assistant"}' },
    { event: 'contentBlockDelta', data: '{"delta":{"text":"héllo"},"contentBlockIndex":0}' },
    { event: 'throttlingException', data: '{"message":"slow down"}' },
  ];
  assert.deepEqual(createAwsEventStreamDecoder().push(stream), expected);
  for (const pieceSize of [1, 3, 13, 50]) {
    const decoder = createAwsEventStreamDecoder();
    const messages = [];
    for (let offset = 0; offset < stream.length; offset += pieceSize) messages.push(...decoder.push(stream.subarray(offset, offset + pieceSize)));
    messages.push(...decoder.end());
    assert.deepEqual(messages, expected, `pieces of ${pieceSize}`);
  }
});

test('typed headers decode', () => {
  // name "b" bool true (type 0), name "i" int32 (type 4) = -2, name "t" timestamp (type 8)
  const headers = Buffer.concat([
    Buffer.from([1, 0x62, 0]),
    Buffer.from([1, 0x69, 4, 0xff, 0xff, 0xff, 0xfe]),
    Buffer.from([1, 0x74, 8, 0, 0, 0, 0, 0, 0, 0, 5]),
  ]);
  const message = Buffer.concat([Buffer.alloc(12), headers, Buffer.from('x'), Buffer.alloc(4)]);
  message.writeUInt32BE(message.length, 0);
  message.writeUInt32BE(headers.length, 4);

  message.writeUInt32BE(zlibCrc32(message.subarray(0, 8)), 8);
  message.writeUInt32BE(zlibCrc32(message.subarray(0, message.length - 4)), message.length - 4);
  assert.deepEqual(decodeEventStreamMessage(message).headers, { b: true, i: -2, t: 5n });
});

test('a corrupted message or a cut stream is an error', () => {
  const message = encodeEventStreamMessage(eventHeaders('messageStop'), '{"stopReason":"end_turn"}');
  const corrupted = Buffer.from(message);
  corrupted[corrupted.length - 6] ^= 0xff;
  assert.throws(() => createAwsEventStreamDecoder().push(corrupted), /checksum/);
  const decoder = createAwsEventStreamDecoder();
  assert.deepEqual(decoder.push(message.subarray(0, 20)), []);
  assert.throws(() => decoder.end(), /ended inside a message/);
});

