/** What the magic bytes say an uploaded image is, with its dimensions when cheaply readable. */
export interface SniffedImage {
  format: 'png' | 'jpeg' | 'webp';
  width?: number;
  height?: number;
}

/** Recognises PNG, JPEG and WebP by their signatures; undefined for anything else. */
export function sniffImage(bytes: Uint8Array): SniffedImage | undefined {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.length >= 24 && buffer.readUInt32BE(0) === 0x89504e47 && buffer.readUInt32BE(4) === 0x0d0a1a0a) {
    // The IHDR chunk always comes first (RFC 2083 §4.1.1).
    const hasHeader = buffer.toString('latin1', 12, 16) === 'IHDR';
    return hasHeader ? { format: 'png', width: buffer.readUInt32BE(16), height: buffer.readUInt32BE(20) } : { format: 'png' };
  }
  if (buffer.length >= 3 && buffer[0] === 0xff && buffer[1] === 0xd8 && buffer[2] === 0xff) return { format: 'jpeg', ...jpegSize(buffer) };
  if (buffer.length >= 12 && buffer.toString('latin1', 0, 4) === 'RIFF' && buffer.toString('latin1', 8, 12) === 'WEBP') return { format: 'webp' };
  return undefined;
}

/** Reads the frame size from the first SOFn marker (ITU T.81 §B.2.2). */
function jpegSize(buffer: Buffer): { width?: number; height?: number } {
  let offset = 2;
  while (offset + 9 < buffer.length) {
    if (buffer[offset] !== 0xff) return {};
    const marker = buffer[offset + 1];
    const length = buffer.readUInt16BE(offset + 2);
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) return { height: buffer.readUInt16BE(offset + 5), width: buffer.readUInt16BE(offset + 7) };
    offset += 2 + length;
  }
  return {};
}
