import { crc32 } from 'node:zlib';

/**
 * The AWS event-stream binary framing (application/vnd.amazon.eventstream), used by Bedrock's
 * ConverseStream, among others. Each message:
 *   total length (uint32 BE) | headers length (uint32 BE) | prelude CRC32 |
 *   headers | payload | message CRC32 (over everything before it)
 * A header is: name length (uint8) | name | value type (uint8) | value.
 * https://docs.aws.amazon.com/transcribe/latest/dg/streaming-setting-up.html#streaming-event-stream
 */
export type EventStreamHeaderValue = string | number | boolean | bigint | Uint8Array;

export interface EventStreamMessage {
  headers: Record<string, EventStreamHeaderValue>;
  payload: Buffer;
}

const PRELUDE_BYTES = 12;
const TRAILER_BYTES = 4;
/** AWS caps a message at 16 MiB; anything larger is a framing error, not a message. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** Decodes one complete message (exactly its bytes). Throws on a CRC mismatch. */
export function decodeEventStreamMessage(bytes: Buffer): EventStreamMessage {
  const totalLength = bytes.readUInt32BE(0);
  const headersLength = bytes.readUInt32BE(4);
  if (totalLength !== bytes.length) throw new Error('event-stream: message length mismatch');
  if (crc32(bytes.subarray(0, 8)) !== bytes.readUInt32BE(8)) throw new Error('event-stream: prelude checksum mismatch');
  if (crc32(bytes.subarray(0, totalLength - TRAILER_BYTES)) !== bytes.readUInt32BE(totalLength - TRAILER_BYTES)) {
    throw new Error('event-stream: message checksum mismatch');
  }
  const headersEnd = PRELUDE_BYTES + headersLength;
  return {
    headers: decodeHeaders(bytes.subarray(PRELUDE_BYTES, headersEnd)),
    payload: bytes.subarray(headersEnd, totalLength - TRAILER_BYTES),
  };
}

function decodeHeaders(bytes: Buffer): Record<string, EventStreamHeaderValue> {
  const headers: Record<string, EventStreamHeaderValue> = {};
  let offset = 0;
  while (offset < bytes.length) {
    const nameLength = bytes.readUInt8(offset);
    offset += 1;
    const name = bytes.toString('utf8', offset, offset + nameLength);
    offset += nameLength;
    const type = bytes.readUInt8(offset);
    offset += 1;
    switch (type) {
      case 0:
        headers[name] = true;
        break;
      case 1:
        headers[name] = false;
        break;
      case 2:
        headers[name] = bytes.readInt8(offset);
        offset += 1;
        break;
      case 3:
        headers[name] = bytes.readInt16BE(offset);
        offset += 2;
        break;
      case 4:
        headers[name] = bytes.readInt32BE(offset);
        offset += 4;
        break;
      case 5:
      case 8:
        // int64, and timestamp (milliseconds since the epoch, int64)
        headers[name] = bytes.readBigInt64BE(offset);
        offset += 8;
        break;
      case 6:
      case 7: {
        const length = bytes.readUInt16BE(offset);
        offset += 2;
        const value = bytes.subarray(offset, offset + length);
        headers[name] = type === 7 ? value.toString('utf8') : new Uint8Array(value);
        offset += length;
        break;
      }
      case 9:
        headers[name] = new Uint8Array(bytes.subarray(offset, offset + 16));
        offset += 16;
        break;
      default:
        throw new Error(`event-stream: unknown header type ${type}`);
    }
  }
  return headers;
}

/** Encodes a message with string headers (what services send); used by fakes and tests. */
export function encodeEventStreamMessage(headers: Record<string, string>, payload: string | Uint8Array): Buffer {
  const headerParts: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const nameBytes = Buffer.from(name, 'utf8');
    const valueBytes = Buffer.from(value, 'utf8');
    const part = Buffer.alloc(1 + nameBytes.length + 1 + 2 + valueBytes.length);
    part.writeUInt8(nameBytes.length, 0);
    nameBytes.copy(part, 1);
    part.writeUInt8(7, 1 + nameBytes.length);
    part.writeUInt16BE(valueBytes.length, 2 + nameBytes.length);
    valueBytes.copy(part, 4 + nameBytes.length);
    headerParts.push(part);
  }
  const headerBytes = Buffer.concat(headerParts);
  const payloadBytes = Buffer.from(payload);
  const totalLength = PRELUDE_BYTES + headerBytes.length + payloadBytes.length + TRAILER_BYTES;
  const message = Buffer.alloc(totalLength);
  message.writeUInt32BE(totalLength, 0);
  message.writeUInt32BE(headerBytes.length, 4);
  message.writeUInt32BE(crc32(message.subarray(0, 8)), 8);
  headerBytes.copy(message, PRELUDE_BYTES);
  payloadBytes.copy(message, PRELUDE_BYTES + headerBytes.length);
  message.writeUInt32BE(crc32(message.subarray(0, totalLength - TRAILER_BYTES)), totalLength - TRAILER_BYTES);
  return message;
}

export interface EventStreamDecoder {
  /** Feeds bytes as they arrive; returns the messages they complete (none, one or several). */
  push(chunk: Uint8Array): Array<{ event?: string; data: string }>;
  /** Ends the input; leftover bytes mean the stream was cut inside a message. */
  end(): Array<{ event?: string; data: string }>;
}

/**
 * Incremental decoder yielding `{event, data}`: `event` is the `:event-type` header (or the
 * `:exception-type` of an exception message), `data` the payload as UTF-8 text.
 */
export function createAwsEventStreamDecoder(): EventStreamDecoder {
  let buffer: Buffer = Buffer.alloc(0);
  return {
    push(chunk) {
      buffer = buffer.length === 0 ? Buffer.from(chunk) : Buffer.concat([buffer, chunk]);
      const messages: Array<{ event?: string; data: string }> = [];
      while (buffer.length >= PRELUDE_BYTES) {
        const totalLength = buffer.readUInt32BE(0);
        if (totalLength < PRELUDE_BYTES + TRAILER_BYTES || totalLength > MAX_MESSAGE_BYTES) {
          throw new Error('event-stream: invalid message length');
        }
        if (buffer.length < totalLength) break;
        const message = decodeEventStreamMessage(buffer.subarray(0, totalLength));
        buffer = buffer.subarray(totalLength);
        const eventType = message.headers[':event-type'] ?? message.headers[':exception-type'];
        const event = typeof eventType === 'string' ? eventType : undefined;
        messages.push(event === undefined ? { data: message.payload.toString('utf8') } : { event, data: message.payload.toString('utf8') });
      }
      return messages;
    },
    end() {
      if (buffer.length > 0) throw new Error('event-stream: stream ended inside a message');
      return [];
    },
  };
}
