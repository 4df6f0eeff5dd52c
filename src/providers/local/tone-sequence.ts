export const SPEECH_SAMPLE_RATE = 24_000;
export const SPEECH_MS_PER_CHARACTER = 60;
export const SPEECH_MAX_SECONDS = 30;

/** Seconds of audio the local voice takes for `text`: 60 ms a character (divided by speed), at most 30 s. */
export function speechSeconds(text: string, speed = 1): number {
  const characters = [...text].length;
  return Math.min(SPEECH_MAX_SECONDS, (characters * SPEECH_MS_PER_CHARACTER) / 1000 / speed);
}

/**
 * 16-bit mono PCM at 24 kHz: one short tone per character, its pitch from the character code and
 * the voice's base pitch, silence for whitespace, with 5 ms fades so tones do not click.
 */
export function toneSequence(text: string, basePitchHz: number, speed = 1): Int16Array {
  const characters = [...text];
  const totalSamples = Math.round(speechSeconds(text, speed) * SPEECH_SAMPLE_RATE);
  const samples = new Int16Array(totalSamples);
  const perCharacter = Math.max(1, Math.round((SPEECH_SAMPLE_RATE * SPEECH_MS_PER_CHARACTER) / 1000 / speed));
  const fade = Math.min(120, Math.floor(perCharacter / 4));
  // At most 32 distinct pitches: each tone is synthesised once and copied, which keeps 30 s under a few ms.
  const tones = new Map<number, Int16Array>();
  for (let start = 0, index = 0; start < totalSamples; start += perCharacter, index++) {
    const character = characters[index] ?? ' ';
    if (/\s/.test(character)) continue;
    const frequency = basePitchHz + ((character.codePointAt(0) ?? 0) % 32) * 12;
    let tone = tones.get(frequency);
    if (!tone) {
      tone = synthesiseTone(frequency, perCharacter, fade);
      tones.set(frequency, tone);
    }
    samples.set(tone.subarray(0, Math.min(perCharacter, totalSamples - start)), start);
  }
  return samples;
}

function synthesiseTone(frequency: number, length: number, fade: number): Int16Array {
  const tone = new Int16Array(length);
  for (let position = 0; position < length; position++) {
    const envelope = Math.max(0, Math.min(1, position / fade, (length - 1 - position) / fade));
    tone[position] = Math.round(Math.sin((2 * Math.PI * frequency * position) / SPEECH_SAMPLE_RATE) * 8000 * envelope);
  }
  return tone;
}
