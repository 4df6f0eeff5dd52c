/** The CRC-32 table of ISO 3309 / ITU-T V.42 (reflected polynomial 0xEDB88320), as PNG and zlib use it. */
function buildTable(polynomial: number, reflected: boolean): Uint32Array {
  const table = new Uint32Array(256);
  for (let index = 0; index < 256; index++) {
    let value = reflected ? index : index << 24;
    for (let bit = 0; bit < 8; bit++) {
      if (reflected) value = value & 1 ? (value >>> 1) ^ polynomial : value >>> 1;
      else value = value & 0x80000000 ? (value << 1) ^ polynomial : value << 1;
    }
    table[index] = value >>> 0;
  }
  return table;
}

const PNG_TABLE = buildTable(0xedb88320, true);
// Ogg uses the unreflected polynomial 0x04C11DB7 with initial value 0 and no final xor (RFC 3533 §6).
const OGG_TABLE = buildTable(0x04c11db7, false);

/** CRC-32 as PNG chunks carry it (RFC 2083 §15). */
export function crc32(bytes: Uint8Array, initial = 0): number {
  let crc = ~initial >>> 0;
  for (let index = 0; index < bytes.length; index++) crc = PNG_TABLE[(crc ^ bytes[index]) & 0xff] ^ (crc >>> 8);
  return ~crc >>> 0;
}

/** The Ogg page checksum (RFC 3533 §6). */
export function oggCrc32(bytes: Uint8Array): number {
  let crc = 0;
  for (let index = 0; index < bytes.length; index++) crc = ((crc << 8) ^ OGG_TABLE[((crc >>> 24) ^ bytes[index]) & 0xff]) >>> 0;
  return crc >>> 0;
}
