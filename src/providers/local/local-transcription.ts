import { invalidRequest } from '../../errors/gateway-error.js';
import type { TranscriptionResponse } from '../../protocol/audio.js';
import { subtitleText } from '../../protocol/transcription-subtitles.js';
import type { Usage } from '../../protocol/usage.js';
import type { Outcome, UploadedFile } from '../../pipeline/stage.js';
import type { Invocation } from '../provider.js';
import { LOCAL_SPEECH_OPUS_TAG } from './local-speech.js';
import { applyMarkers } from './local-markers.js';
import { readAudio } from './read-audio.js';

/**
 * Transcription: the text the local voice embedded in its own wav/opus output, otherwise a note of
 * the audio's length. Duration comes from the file's headers and is what gets metered.
 */
export async function runLocalTranscription(invocation: Invocation): Promise<Outcome> {
  const { call } = invocation;
  const request = call.request as Record<string, unknown>;
  const file = uploadedFile(call.files, request);
  if (!file) throw invalidRequest('file is required.', 'file');
  const audio = readAudio(file.bytes, LOCAL_SPEECH_OPUS_TAG);
  if (!audio) throw invalidRequest('file is not a recognised audio format (wav, mp3, ogg/opus, flac, m4a, webm).', 'file');
  if (typeof request['prompt'] === 'string') await applyMarkers(request['prompt'], invocation.signal);
  const seconds = Math.round(audio.seconds * 1000) / 1000;
  const text = audio.embeddedText ?? `[local transcription of ${formatSeconds(seconds)} seconds of audio]`;
  const usage: Usage = { transcriptionSeconds: seconds };
  const format = typeof request['response_format'] === 'string' ? request['response_format'] : 'json';
  const language = typeof request['language'] === 'string' ? request['language'] : 'en';
  switch (format) {
    case 'text':
      return textOutcome(`${text}\n`, 'text/plain; charset=utf-8', usage);
    case 'srt':
      return textOutcome(subtitleText([{ start: 0, end: seconds, text }], 'srt'), 'text/plain; charset=utf-8', usage);
    case 'vtt':
      return textOutcome(subtitleText([{ start: 0, end: seconds, text }], 'vtt'), 'text/vtt; charset=utf-8', usage);
    case 'verbose_json':
      return {
        kind: 'json',
        body: { task: 'transcribe', language, duration: seconds, text, segments: [{ id: 0, start: 0, end: seconds, text }] },
        usage,
      };
    default: {
      const body: TranscriptionResponse = { text };
      return { kind: 'json', body, usage };
    }
  }
}

function uploadedFile(files: Readonly<Record<string, UploadedFile>> | undefined, request: Record<string, unknown>): UploadedFile | undefined {
  const candidate = files?.['file'] ?? request['file'];
  if (typeof candidate === 'object' && candidate !== null && Buffer.isBuffer((candidate as UploadedFile).bytes)) return candidate as UploadedFile;
  return undefined;
}

function textOutcome(text: string, contentType: string, usage: Usage): Outcome {
  return { kind: 'binary', contentType, bytes: Buffer.from(text, 'utf8'), usage };
}

function formatSeconds(seconds: number): string {
  return String(Math.round(seconds * 10) / 10);
}
