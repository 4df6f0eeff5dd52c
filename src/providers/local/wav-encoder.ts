/** Marks a WAV comment as text the local voice spoke, so local transcription can give it back. */
export const LOCAL_SPEECH_COMMENT_PREFIX = 'local-tts:';

/**
 * A RIFF/WAVE file of 16-bit mono PCM (the canonical WAVE layout: RIFF header, fmt, LIST/INFO, data).
 * `comment`, when given, is stored as the INFO ICMT entry.
 */
export function encodeWav(samples: Int16Array, sampleRate: number, comment?: string): Buffer {
  const format = Buffer.alloc(16);
  format.writeUInt16LE(1, 0); // PCM
  format.writeUInt16LE(1, 2); // channels
  format.writeUInt32LE(sampleRate, 4);
  format.writeUInt32LE(sampleRate * 2, 8); // byte rate
  format.writeUInt16LE(2, 12); // block align
  format.writeUInt16LE(16, 14); // bits per sample
  const data = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  const chunks = [riffChunk('fmt ', format)];
  if (comment !== undefined) {
    const text = Buffer.concat([Buffer.from(comment, 'utf8'), Buffer.alloc(1)]);
    chunks.push(riffChunk('LIST', Buffer.concat([Buffer.from('INFO', 'latin1'), riffChunk('ICMT', text)])));
  }
  chunks.push(riffChunk('data', data));
  const body = Buffer.concat(chunks);
  const header = Buffer.alloc(12);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(4 + body.length, 4);
  header.write('WAVE', 8, 'latin1');
  return Buffer.concat([header, body]);
}

/** A chunk: id, little-endian size, data, and a pad byte when the size is odd (the size excludes it). */
function riffChunk(id: string, data: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.write(id, 0, 'latin1');
  header.writeUInt32LE(data.length, 4);
  return Buffer.concat(data.length % 2 ? [header, data, Buffer.alloc(1)] : [header, data]);
}
