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
  for (let start = 0, index = 0; start < totalSamples; start += perCharacter, index++) {
    const character = characters[index] ?? ' ';
    if (/\s/.test(character)) continue;
    const frequency = basePitchHz + ((character.codePointAt(0) ?? 0) % 32) * 12;
    const end = Math.min(totalSamples, start + perCharacter);
    for (let sample = start; sample < end; sample++) {
      const position = sample - start;
      const envelope = Math.min(1, position / fade, (end - 1 - sample) / fade);
      samples[sample] = Math.round(Math.sin((2 * Math.PI * frequency * position) / SPEECH_SAMPLE_RATE) * 8000 * Math.max(0, envelope));
    }
  }
  return samples;
}
