import { invalidRequest } from '../../errors/gateway-error.js';
import { SPEECH_CONTENT_TYPES, type SpeechRequest } from '../../protocol/audio.js';
import type { Usage } from '../../protocol/usage.js';
import type { Outcome } from '../../pipeline/stage.js';
import type { Invocation } from '../provider.js';
import { fnv1a } from './fnv-hash.js';
import { applyMarkers } from './local-markers.js';
import { encodeSilentMp3 } from './mp3-encoder.js';
import { encodeSilentOggOpus } from './ogg-opus-encoder.js';
import { SPEECH_SAMPLE_RATE, speechSeconds, toneSequence } from './tone-sequence.js';
import { encodeWav, LOCAL_SPEECH_COMMENT_PREFIX } from './wav-encoder.js';

/** OpenAI's speech voices; the local voice only changes the base pitch. */
export const LOCAL_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer', 'verse'] as const;
export type LocalVoice = (typeof LOCAL_VOICES)[number];

/** The Vorbis-comment field of Ogg Opus output that carries the spoken text. */
export const LOCAL_SPEECH_OPUS_TAG = 'LOCAL_TTS_TEXT';

/**
 * Speech in wav (a tone per character, with the text in an INFO comment), mp3 (silent MPEG frames
 * of the same duration) or opus (silent Ogg Opus with the text in a tag).
 */
export async function runLocalSpeech(invocation: Invocation): Promise<Outcome> {
  const request = invocation.call.request as unknown as SpeechRequest;
  await applyMarkers(request.input, invocation.signal);
  const voiceIndex = (LOCAL_VOICES as readonly string[]).indexOf(request.voice);
  if (voiceIndex === -1) throw invalidRequest(`voice must be one of: ${LOCAL_VOICES.join(', ')}.`, 'voice');
  const format = request.response_format ?? 'mp3';
  const speed = request.speed ?? 1;
  const usage: Usage = { speechCharacters: [...request.input].length };
  let bytes: Buffer;
  if (format === 'wav') {
    const samples = toneSequence(request.input, 180 + voiceIndex * 20, speed);
    bytes = encodeWav(samples, SPEECH_SAMPLE_RATE, `${LOCAL_SPEECH_COMMENT_PREFIX}${request.input}`);
  } else if (format === 'opus') {
    bytes = encodeSilentOggOpus(
      speechSeconds(request.input, speed),
      SPEECH_SAMPLE_RATE,
      [`${LOCAL_SPEECH_OPUS_TAG}=${request.input}`],
      fnv1a(`${request.voice}:${request.input}`),
    );
  } else {
    bytes = encodeSilentMp3(speechSeconds(request.input, speed));
  }
  return { kind: 'binary', contentType: SPEECH_CONTENT_TYPES[format], bytes, usage };
}
