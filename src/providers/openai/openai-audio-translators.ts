import { z } from 'zod';
import { subtitleText } from '../../protocol/transcription-subtitles.js';
import { SPEECH_CONTENT_TYPES, type SpeechFormat, type SpeechRequest, type TranscriptionRequest, type TranscriptionResponse } from '../../protocol/audio.js';
import type { UploadedFile } from '../../pipeline/stage.js';
import type { Usage } from '../../protocol/usage.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { parseUpstreamBody } from '../http/parse-upstream-body.js';
import type { OperationTranslator } from '../http/provider-adapter.js';
import { buildMultipartBody, multipartBoundary, type MultipartPart } from './multipart-body.js';
import { openaiHeaders, openaiUrl } from './openai-endpoint.js';
import { requestOf } from './translation-request.js';
// The local provider's header reader: it measures audio without decoding it, whoever transcribes it.
import { readAudio } from '../local/read-audio.js';

/** POST /audio/speech (https://platform.openai.com/docs/api-reference/audio/createSpeech): JSON in, audio bytes out. */
export const openaiSpeechTranslator: OperationTranslator<SpeechRequest> = {
  buildRequest(request, context) {
    const body: Record<string, unknown> = {
      model: context.target.upstreamModel,
      input: request.input,
      voice: request.voice,
      response_format: request.response_format ?? 'mp3',
    };
    if (typeof request.speed === 'number') body.speed = request.speed;
    return { method: 'POST', url: openaiUrl(context.target, '/audio/speech'), headers: openaiHeaders(context.target, 'application/json'), body: JSON.stringify(body) };
  },
  parseResponse(_body, context) {
    const request = requestOf<SpeechRequest>(context);
    const format: SpeechFormat = request?.response_format ?? 'mp3';
    const upstreamType = context.contentType.split(';')[0].trim();
    const contentType = upstreamType.startsWith('audio/') ? upstreamType : SPEECH_CONTENT_TYPES[format];
    const usage: Usage | undefined = request ? { speechCharacters: [...request.input].length } : undefined;
    return { body: undefined, binary: { contentType, bytes: new Uint8Array(context.raw) }, usage };
  },
};

type TranscriptionInput = Partial<TranscriptionRequest> & { files?: Readonly<Record<string, UploadedFile>>; response_format?: string };

const transcriptionSchema = z.looseObject({
  text: z.string(),
  duration: z.number().nullish(),
  usage: z.looseObject({ type: z.string().nullish(), seconds: z.number().nullish() }).nullish(),
  segments: z.array(z.looseObject({ start: z.number(), end: z.number(), text: z.string() })).nullish(),
});

/** OpenAI's transcription formats. */
const TRANSCRIPTION_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
type TranscriptionFormat = (typeof TRANSCRIPTION_FORMATS)[number];

function transcriptionFormat(value: unknown): TranscriptionFormat {
  if (value === undefined || value === null || value === '') return 'json';
  if (typeof value === 'string' && (TRANSCRIPTION_FORMATS as readonly string[]).includes(value)) return value as TranscriptionFormat;
  throw new GatewayError('invalid_request', `response_format must be one of ${TRANSCRIPTION_FORMATS.join(', ')}.`, { param: 'response_format' });
}

/**
 * What is asked of the upstream: always JSON, so the answer can be read and its duration metered.
 * Subtitles are made here from verbose_json's timed segments; plain text from json's text.
 */
function upstreamTranscriptionFormat(format: TranscriptionFormat): 'json' | 'verbose_json' {
  return format === 'verbose_json' || format === 'srt' || format === 'vtt' ? 'verbose_json' : 'json';
}

/** POST /audio/transcriptions, multipart (https://platform.openai.com/docs/api-reference/audio/createTranscription). */
export const openaiTranscriptionTranslator: OperationTranslator<TranscriptionInput> = {
  buildRequest(request, context) {
    const file = request.file ?? request.files?.file;
    if (!file) throw new GatewayError('invalid_request', 'An audio file is required.', { param: 'file' });
    const format = transcriptionFormat(request.response_format);
    const parts: MultipartPart[] = [
      { name: 'model', value: context.target.upstreamModel },
      { name: 'file', file },
      { name: 'response_format', value: upstreamTranscriptionFormat(format) },
    ];
    if (request.language) parts.push({ name: 'language', value: request.language });
    if (request.prompt) parts.push({ name: 'prompt', value: request.prompt });
    const { body, contentType } = buildMultipartBody(parts, multipartBoundary(context.requestId));
    return { method: 'POST', url: openaiUrl(context.target, '/audio/transcriptions'), headers: openaiHeaders(context.target, contentType), body };
  },
  parseResponse(body, context) {
    const parsed = parseUpstreamBody(transcriptionSchema, body, 'openai', 'The openai upstream answered with an unreadable transcription');
    const request = requestOf<TranscriptionInput>(context);
    const format = transcriptionFormat(request?.response_format);
    const seconds = transcribedSeconds(parsed, request);
    const usage: Usage | undefined = typeof seconds === 'number' ? { transcriptionSeconds: seconds } : undefined;
    switch (format) {
      case 'verbose_json':
        // The upstream's answer whole (segments, words, language), as the client asked for it.
        return { body: parsed, usage };
      case 'text':
        return { body: undefined, binary: textAnswer(`${parsed.text}\n`, 'text/plain; charset=utf-8'), usage };
      case 'srt':
        return { body: undefined, binary: textAnswer(subtitles(parsed, seconds, 'srt'), 'text/plain; charset=utf-8'), usage };
      case 'vtt':
        return { body: undefined, binary: textAnswer(subtitles(parsed, seconds, 'vtt'), 'text/vtt; charset=utf-8'), usage };
      default: {
        const response: TranscriptionResponse = { text: parsed.text };
        if (typeof seconds === 'number') response.duration = seconds;
        return { body: response, usage };
      }
    }
  },
};

type ParsedTranscription = z.infer<typeof transcriptionSchema>;

/**
 * Seconds of audio to bill: what the upstream says (usage of type duration, or verbose_json's
 * duration). Models that report tokens instead (gpt-4o-transcribe) are priced per minute like the
 * others, so their audio is measured from the file's headers (docs/money.md); undefined when it
 * cannot be, and the hold's estimate is charged.
 */
function transcribedSeconds(parsed: ParsedTranscription, request: TranscriptionInput | undefined): number | undefined {
  const reported = parsed.usage?.type === 'duration' ? parsed.usage.seconds : parsed.duration;
  if (typeof reported === 'number') return reported;
  const file = request?.file ?? request?.files?.file;
  if (!file) return undefined;
  const measured = readAudio(file.bytes, '')?.seconds;
  return typeof measured === 'number' ? Math.round(measured * 1000) / 1000 : undefined;
}

function textAnswer(text: string, contentType: string): { contentType: string; bytes: Uint8Array } {
  return { contentType, bytes: Buffer.from(text, 'utf8') };
}

/** SubRip or WebVTT from the timed segments (one cue for the whole text when there are none). */
function subtitles(parsed: ParsedTranscription, seconds: number | undefined, kind: 'srt' | 'vtt'): string {
  return subtitleText(parsed.segments?.length ? parsed.segments : [{ start: 0, end: seconds ?? 0, text: parsed.text }], kind);
}
