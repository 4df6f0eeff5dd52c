import { oggCrc32 } from './crc32.js';

/** Opus always counts granule positions at 48 kHz (RFC 7845 §4). */
export const OPUS_GRANULE_RATE = 48_000;
const PRE_SKIP = 312;
const SAMPLES_PER_PACKET = 960; // 20 ms
const PACKETS_PER_PAGE = 50;
// TOC 0xF8: config 31 (CELT-only, fullband, 20 ms), mono, one frame; 0xFF 0xFE is the well-known
// CELT silence frame that encoders emit for digital silence.
const SILENCE_PACKET = Buffer.from([0xf8, 0xff, 0xfe]);

/**
 * An Ogg Opus file (RFC 7845 on the RFC 3533 container) of silent 20 ms packets covering `seconds`:
 * OpusHead on the first page, OpusTags (carrying `comments`) on the second, audio pages after,
 * each with its CRC; the last page ends the stream and its granule position trims the padding.
 */
export function encodeSilentOggOpus(seconds: number, inputSampleRate: number, comments: readonly string[], serial: number): Buffer {
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0, 'latin1');
  head[8] = 1; // version
  head[9] = 1; // channels
  head.writeUInt16LE(PRE_SKIP, 10);
  head.writeUInt32LE(inputSampleRate, 12);
  head.writeInt16LE(0, 16); // output gain
  head[18] = 0; // channel mapping family
  const vendor = Buffer.from('gw local', 'utf8');
  const tagParts = [Buffer.from('OpusTags', 'latin1'), uint32(vendor.length), vendor, uint32(comments.length)];
  for (const comment of comments) {
    const bytes = Buffer.from(comment, 'utf8');
    tagParts.push(uint32(bytes.length), bytes);
  }
  const pages: Buffer[] = [oggPage([head], 0, serial, 0, 0x02), oggPage([Buffer.concat(tagParts)], 0, serial, 1, 0)];
  const samples = Math.max(1, Math.round(seconds * OPUS_GRANULE_RATE));
  const packets = Math.ceil((samples + PRE_SKIP) / SAMPLES_PER_PACKET);
  for (let first = 0, sequence = 2; first < packets; first += PACKETS_PER_PAGE, sequence++) {
    const count = Math.min(PACKETS_PER_PAGE, packets - first);
    const last = first + count >= packets;
    const granule = last ? samples + PRE_SKIP : (first + count) * SAMPLES_PER_PACKET;
    pages.push(oggPage(Array.from({ length: count }, () => SILENCE_PACKET), granule, serial, sequence, last ? 0x04 : 0));
  }
  return Buffer.concat(pages);
}

/** One page holding whole packets; each packet's lacing is 255s then its remainder (RFC 3533 §6). */
function oggPage(packets: readonly Buffer[], granule: number, serial: number, sequence: number, flags: number): Buffer {
  const lacing: number[] = [];
  for (const packet of packets) {
    for (let remaining = packet.length; ; remaining -= 255) {
      if (remaining < 255) {
        lacing.push(remaining);
        break;
      }
      lacing.push(255);
    }
  }
  if (lacing.length > 255) throw new RangeError('an Ogg page holds at most 255 segments');
  const header = Buffer.alloc(27 + lacing.length);
  header.write('OggS', 0, 'latin1');
  header[4] = 0; // version
  header[5] = flags;
  header.writeBigUInt64LE(BigInt(granule), 6);
  header.writeUInt32LE(serial >>> 0, 14);
  header.writeUInt32LE(sequence, 18);
  header.writeUInt32LE(0, 22); // CRC, filled below
  header[26] = lacing.length;
  header.set(lacing, 27);
  const page = Buffer.concat([header, ...packets]);
  page.writeUInt32LE(oggCrc32(page), 22);
  return page;
}

function uint32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32LE(value, 0);
  return buffer;
}
