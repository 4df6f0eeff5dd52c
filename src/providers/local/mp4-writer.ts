/**
 * A minimal ISO base media file (ISO/IEC 14496-12): ftyp, moov with an mvhd carrying the duration,
 * and an mdat. It parses as boxes and reports its length; it holds no tracks, so players show
 * nothing, which is all an offline stand-in needs.
 */
export function writeMinimalMp4(durationSeconds: number, payload: Buffer): Buffer {
  const ftyp = box('ftyp', Buffer.concat([Buffer.from('isom', 'latin1'), uint32(0x200), Buffer.from('isomiso2mp41', 'latin1')]));
  const mvhd = Buffer.alloc(100);
  // version 0, flags 0, creation and modification time 0 (1904-01-01: deterministic output).
  mvhd.writeUInt32BE(1000, 12); // timescale: milliseconds
  mvhd.writeUInt32BE(Math.round(durationSeconds * 1000), 16);
  mvhd.writeUInt32BE(0x00010000, 20); // rate 1.0
  mvhd.writeUInt16BE(0x0100, 24); // volume 1.0
  // Unity matrix (§8.2.2.2): a, d = 1.0 in 16.16, w = 1.0 in 2.30.
  mvhd.writeUInt32BE(0x00010000, 36);
  mvhd.writeUInt32BE(0x00010000, 52);
  mvhd.writeUInt32BE(0x40000000, 68);
  mvhd.writeUInt32BE(1, 96); // next_track_ID
  const moov = box('moov', box('mvhd', mvhd));
  return Buffer.concat([ftyp, moov, box('mdat', payload)]);
}

function box(type: string, body: Buffer): Buffer {
  return Buffer.concat([uint32(8 + body.length), Buffer.from(type, 'latin1'), body]);
}

function uint32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value >>> 0, 0);
  return buffer;
}
