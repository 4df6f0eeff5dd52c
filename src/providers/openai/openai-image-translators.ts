import { z } from 'zod';
import type { ImageEditRequest, ImageGenerationRequest, ImageResponse } from '../../protocol/images.js';
import type { UploadedFile } from '../../pipeline/stage.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { parseUpstreamBody } from '../http/parse-upstream-body.js';
import type { OperationTranslator, TranslationContext } from '../http/provider-adapter.js';
import { buildMultipartBody, multipartBoundary, type MultipartPart } from './multipart-body.js';
import { openaiHeaders, openaiUrl } from './openai-endpoint.js';
import { requestOf } from './translation-request.js';

const imageResponseSchema = z.looseObject({
  created: z.number().nullish(),
  data: z.array(z.looseObject({ b64_json: z.string().nullish(), revised_prompt: z.string().nullish() })),
  size: z.string().nullish(),
  quality: z.string().nullish(),
});

/** DALL·E models answer with URLs unless asked for b64_json; gpt-image models always send b64_json and reject the field. */
function wantsResponseFormat(upstreamModel: string): boolean {
  return upstreamModel.startsWith('dall-e');
}

function parseImages(body: unknown, context: TranslationContext, request: { size?: string | null; quality?: string | null } | undefined) {
  const parsed = parseUpstreamBody(imageResponseSchema, body, 'openai', 'The openai upstream answered with an unreadable image result');
  const images = parsed.data.filter((image) => image.b64_json);
  const response: ImageResponse = {
    created: parsed.created ?? context.created,
    data: images.map((image) => ({ b64_json: image.b64_json!, ...(image.revised_prompt ? { revised_prompt: image.revised_prompt } : {}) })),
  };
  const size = parsed.size ?? request?.size ?? '1024x1024';
  const quality = parsed.quality ?? request?.quality ?? 'standard';
  return { body: response, usage: { images: [{ size, quality, count: images.length }] } };
}

/** POST /images/generations (https://platform.openai.com/docs/api-reference/images/create). */
export const openaiImageGenerationTranslator: OperationTranslator<ImageGenerationRequest> = {
  buildRequest(request, context) {
    const body: Record<string, unknown> = { model: context.target.upstreamModel, prompt: request.prompt };
    if (request.n) body.n = request.n;
    if (request.size) body.size = request.size;
    if (request.quality) body.quality = request.quality;
    if (request.user) body.user = request.user;
    if (wantsResponseFormat(context.target.upstreamModel)) body.response_format = 'b64_json';
    return {
      method: 'POST',
      url: openaiUrl(context.target, '/images/generations'),
      headers: openaiHeaders(context.target, 'application/json'),
      body: JSON.stringify(body),
    };
  },
  parseResponse: (body, context) => parseImages(body, context, requestOf<ImageGenerationRequest>(context)),
};

type EditInput = Partial<ImageEditRequest> & { prompt: string; files?: Readonly<Record<string, UploadedFile>> };

/** POST /images/edits, multipart (https://platform.openai.com/docs/api-reference/images/createEdit). */
export const openaiImageEditTranslator: OperationTranslator<EditInput> = {
  buildRequest(request, context) {
    const uploaded = request.files?.image;
    const images = request.image ? [request.image] : uploaded ? [uploaded, ...(uploaded.more ?? [])] : [];
    const mask = request.mask ?? request.files?.mask;
    if (images.length === 0) throw new GatewayError('invalid_request', 'An image file is required.', { param: 'image' });
    // Several images go as OpenAI's array form `image[]` (what its SDK sends for a list), one as `image`.
    const imageField = images.length > 1 ? 'image[]' : 'image';
    const parts: MultipartPart[] = [
      { name: 'model', value: context.target.upstreamModel },
      { name: 'prompt', value: request.prompt },
      ...images.map((file) => ({ name: imageField, file })),
    ];
    if (mask) parts.push({ name: 'mask', file: mask });
    if (request.n) parts.push({ name: 'n', value: String(request.n) });
    if (request.size) parts.push({ name: 'size', value: request.size });
    if (wantsResponseFormat(context.target.upstreamModel)) parts.push({ name: 'response_format', value: 'b64_json' });
    const { body, contentType } = buildMultipartBody(parts, multipartBoundary(context.requestId));
    return { method: 'POST', url: openaiUrl(context.target, '/images/edits'), headers: openaiHeaders(context.target, contentType), body };
  },
  parseResponse: (body, context) => parseImages(body, context, requestOf<EditInput>(context)),
};
