import { LOCAL_SPEECH_COMMENT_PREFIX } from './wav-encoder.js';

/** What local transcription can tell about an audio file without decoding it. */
export interface AudioFacts {
  format: 'wav' | 'ogg' | 'mp3' | 'flac' | 'mp4' | 'webm';
  seconds: number;
  /** Text the local voice embedded when it made the file. */
  embeddedText?: string;
}

// For containers we do not parse, duration is estimated from the size at a typical 128 kbit/s.
const ESTIMATE_BYTES_PER_SECOND = 16_000;

/** Reads an audio file's format and duration from its headers; undefined when the bytes are not audio. */
export function readAudio(bytes: Buffer, opusTextTag: string): AudioFacts | undefined {
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WAVE') return readWav(bytes);
  if (bytes.length >= 4 && bytes.toString('latin1', 0, 4) === 'OggS') return readOgg(bytes, opusTextTag);
  if (bytes.length >= 4 && bytes.toString('latin1', 0, 4) === 'fLaC') return estimate('flac', bytes);
  if (bytes.length >= 8 && bytes.toString('latin1', 4, 8) === 'ftyp') return estimate('mp4', bytes);
  if (bytes.length >= 4 && bytes.readUInt32BE(0) === 0x1a45dfa3) return estimate('webm', bytes);
  if (bytes.length >= 3 && bytes.toString('latin1', 0, 3) === 'ID3') return readMp3(bytes, id3Size(bytes));
  if (bytes.length >= 4 && bytes[0] === 0xff && (bytes[1] & 0xe0) === 0xe0) return readMp3(bytes, 0);
  return undefined;
}

function estimate(format: AudioFacts['format'], bytes: Buffer): AudioFacts {
  return { format, seconds: bytes.length / ESTIMATE_BYTES_PER_SECOND };
}

function readWav(bytes: Buffer): AudioFacts {
  let byteRate = 0;
  let dataBytes = 0;
  let embeddedText: string | undefined;
  for (let offset = 12; offset + 8 <= bytes.length; ) {
    const id = bytes.toString('latin1', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    const start = offset + 8;
    if (id === 'fmt ' && size >= 16) byteRate = bytes.readUInt32LE(start + 8);
    else if (id === 'data') dataBytes = Math.min(size, bytes.length - start);
    else if (id === 'LIST' && bytes.toString('latin1', start, start + 4) === 'INFO') embeddedText = infoComment(bytes.subarray(start + 4, start + size));
    offset = start + size + (size % 2);
  }
  return { format: 'wav', seconds: byteRate > 0 ? dataBytes / byteRate : 0, embeddedText };
}

function infoComment(info: Buffer): string | undefined {
  for (let offset = 0; offset + 8 <= info.length; ) {
    const id = info.toString('latin1', offset, offset + 4);
    const size = info.readUInt32LE(offset + 4);
    if (id === 'ICMT') {
      const text = info.toString('utf8', offset + 8, offset + 8 + size).replace(/\0+$/, '');
      return text.startsWith(LOCAL_SPEECH_COMMENT_PREFIX) ? text.slice(LOCAL_SPEECH_COMMENT_PREFIX.length) : undefined;
    }
    offset += 8 + size + (size % 2);
  }
  return undefined;
}

/** Duration from the last page's granule position; Opus counts at 48 kHz after its pre-skip (RFC 7845 §4). */
function readOgg(bytes: Buffer, opusTextTag: string): AudioFacts {
  let granule = 0n;
  let preSkip = 0;
  let rate = 48_000;
  let embeddedText: string | undefined;
  for (let offset = 0; offset + 27 <= bytes.length && bytes.toString('latin1', offset, offset + 4) === 'OggS'; ) {
    const segments = bytes[offset + 26];
    const lacing = bytes.subarray(offset + 27, offset + 27 + segments);
    const bodyLength = lacing.reduce((sum, value) => sum + value, 0);
    const body = bytes.subarray(offset + 27 + segments, offset + 27 + segments + bodyLength);
    const pageGranule = bytes.readBigInt64LE(offset + 6);
    if (pageGranule > 0n) granule = pageGranule;
    if (body.toString('latin1', 0, 8) === 'OpusHead' && body.length >= 12) preSkip = body.readUInt16LE(10);
    else if (body.toString('latin1', 0, 7) === '\u0001vorbis' && body.length >= 16) rate = body.readUInt32LE(12);
    else if (body.toString('latin1', 0, 8) === 'OpusTags') embeddedText = opusTag(body, opusTextTag);
    offset += 27 + segments + bodyLength;
  }
  return { format: 'ogg', seconds: Math.max(0, Number(granule) - preSkip) / rate, embeddedText };
}

function opusTag(body: Buffer, name: string): string | undefined {
  let offset = 8;
  const vendorLength = body.readUInt32LE(offset);
  offset += 4 + vendorLength;
  const count = body.readUInt32LE(offset);
  offset += 4;
  for (let index = 0; index < count && offset + 4 <= body.length; index++) {
    const length = body.readUInt32LE(offset);
    const comment = body.toString('utf8', offset + 4, offset + 4 + length);
    offset += 4 + length;
    if (comment.toUpperCase().startsWith(`${name}=`)) return comment.slice(name.length + 1);
  }
  return undefined;
}

function id3Size(bytes: Buffer): number {
  if (bytes.length < 10) return bytes.length;
  // Syncsafe integer: 7 bits per byte (ID3v2.4 §3.1).
  return 10 + ((bytes[6] & 0x7f) << 21) + ((bytes[7] & 0x7f) << 14) + ((bytes[8] & 0x7f) << 7) + (bytes[9] & 0x7f);
}

const MPEG1_L3_BITRATES = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const MPEG2_L3_BITRATES = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const SAMPLE_RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };

/** Walks Layer III frame headers (ISO/IEC 11172-3 §2.4.2.3); falls back to a size estimate when they stop making sense. */
function readMp3(bytes: Buffer, start: number): AudioFacts {
  let seconds = 0;
  let offset = start;
  while (offset + 4 <= bytes.length) {
    const header = bytes.readUInt32BE(offset);
    if ((header & 0xffe00000) >>> 0 !== 0xffe00000) break;
    const version = (header >>> 19) & 3;
    const layer = (header >>> 17) & 3;
    const bitrateIndex = (header >>> 12) & 15;
    const rateIndex = (header >>> 10) & 3;
    const padding = (header >>> 9) & 1;
    if (version === 1 || layer !== 1 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) break;
    const rate = SAMPLE_RATES[version][rateIndex];
    const kbps = (version === 3 ? MPEG1_L3_BITRATES : MPEG2_L3_BITRATES)[bitrateIndex];
    const samplesPerFrame = version === 3 ? 1152 : 576;
    const frameBytes = Math.floor(((samplesPerFrame / 8) * kbps * 1000) / rate) + padding;
    seconds += samplesPerFrame / rate;
    offset += frameBytes;
  }
  if (seconds === 0) return estimate('mp3', bytes);
  return { format: 'mp3', seconds };
}
