import { z } from 'zod';
import { SPEECH_CONTENT_TYPES, type SpeechFormat, type SpeechRequest, type TranscriptionRequest, type TranscriptionResponse } from '../../protocol/audio.js';
import type { UploadedFile } from '../../pipeline/stage.js';
import type { Usage } from '../../protocol/usage.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { parseUpstreamBody } from '../http/parse-upstream-body.js';
import type { OperationTranslator } from '../http/provider-adapter.js';
import { buildMultipartBody, multipartBoundary, type MultipartPart } from './multipart-body.js';
import { openaiHeaders, openaiUrl } from './openai-endpoint.js';
import { requestOf } from './translation-request.js';

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
});

/** POST /audio/transcriptions, multipart (https://platform.openai.com/docs/api-reference/audio/createTranscription). */
export const openaiTranscriptionTranslator: OperationTranslator<TranscriptionInput> = {
  buildRequest(request, context) {
    const file = request.file ?? request.files?.file;
    if (!file) throw new GatewayError('invalid_request', 'An audio file is required.', { param: 'file' });
    const parts: MultipartPart[] = [
      { name: 'model', value: context.target.upstreamModel },
      { name: 'file', file },
      // Always JSON, so the answer can be read (and its duration metered); verbose_json when asked.
      { name: 'response_format', value: request.response_format === 'verbose_json' ? 'verbose_json' : 'json' },
    ];
    if (request.language) parts.push({ name: 'language', value: request.language });
    if (request.prompt) parts.push({ name: 'prompt', value: request.prompt });
    const { body, contentType } = buildMultipartBody(parts, multipartBoundary(context.requestId));
    return { method: 'POST', url: openaiUrl(context.target, '/audio/transcriptions'), headers: openaiHeaders(context.target, contentType), body };
  },
  parseResponse(body) {
    const parsed = parseUpstreamBody(transcriptionSchema, body, 'openai', 'The openai upstream answered with an unreadable transcription');
    const seconds = parsed.usage?.type === 'duration' ? parsed.usage.seconds : parsed.duration;
    const response: TranscriptionResponse = { text: parsed.text };
    if (typeof seconds === 'number') response.duration = seconds;
    return { body: response, usage: typeof seconds === 'number' ? { transcriptionSeconds: seconds } : undefined };
  },
};
