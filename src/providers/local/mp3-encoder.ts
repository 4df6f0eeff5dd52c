/**
 * MPEG-1 Layer III at 48 kHz, 64 kbit/s, mono (ISO/IEC 11172-3). A frame holds 1152 samples
 * (24 ms) and is 144 × 64000 / 48000 = 192 bytes, so no padding slot is ever needed.
 */
export const MP3_SAMPLE_RATE = 48_000;
export const MP3_SAMPLES_PER_FRAME = 1152;
export const MP3_FRAME_BYTES = 192;

// Sync 0xFFF, MPEG-1, Layer III, no CRC | bitrate index 5 (64k), 48 kHz, no padding | mono, original.
const FRAME_HEADER = [0xff, 0xfb, 0x54, 0xc4] as const;

/**
 * Silent MP3 frames covering `seconds`. The 17-byte side info is all zero: main_data_begin 0 and
 * part2_3_length 0 in every granule, which decoders play as digital silence; the rest of each frame
 * is ancillary data. Encoding real audio would need a psychoacoustic encoder, which the offline
 * provider does not need to prove the format.
 */
export function encodeSilentMp3(seconds: number): Buffer {
  const frames = Math.max(1, Math.ceil((seconds * MP3_SAMPLE_RATE) / MP3_SAMPLES_PER_FRAME));
  const output = Buffer.alloc(frames * MP3_FRAME_BYTES);
  for (let frame = 0; frame < frames; frame++) output.set(FRAME_HEADER, frame * MP3_FRAME_BYTES);
  return output;
}
