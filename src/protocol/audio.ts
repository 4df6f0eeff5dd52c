import { z } from 'zod';

export const SPEECH_FORMATS = ['mp3', 'wav', 'opus'] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

export const SPEECH_CONTENT_TYPES: Record<SpeechFormat, string> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  opus: 'audio/ogg',
};

/** SPEC "Audio" speech: voice is required; the voice list is ours (docs/endpoints.md). */
export const speechRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.string().min(1).max(4096),
  voice: z.string().min(1).max(64),
  response_format: z.enum(SPEECH_FORMATS).nullish(),
  speed: z.number().min(0.25).max(4).nullish(),
});
export type SpeechRequest = z.infer<typeof speechRequestSchema>;

export interface TranscriptionRequest {
  model: string;
  file: { bytes: Buffer; filename: string; contentType: string };
  language?: string;
  prompt?: string;
}

export interface TranscriptionResponse {
  text: string;
  /** Seconds of audio, used for metering; not part of the spec's response. */
  duration?: number;
}
