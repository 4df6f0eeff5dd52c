import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import { chatRequestSchema } from '../../protocol/chat.js';
import { isCommonChatRequest } from '../../protocol/chat-quick-check.js';
import { completionRequestSchema } from '../../protocol/completions.js';
import { embeddingRequestSchema } from '../../protocol/embeddings.js';
import { OPERATION_PATHS, type Operation } from '../../protocol/endpoints.js';
import { imageGenerationRequestSchema } from '../../protocol/images.js';
import { speechRequestSchema } from '../../protocol/audio.js';
import { moderationRequestSchema } from '../../protocol/moderations.js';
import { imageEditFieldsSchema, transcriptionFieldsSchema } from '../../protocol/multipart-requests.js';
import { ocrRequestSchema } from '../../protocol/ocr.js';
import { rerankRequestSchema } from '../../protocol/rerank.js';
import { VIDEO_REFERENCE_UNSUPPORTED, videoRequestSchema } from '../../protocol/videos.js';
import type { Next } from '../../pipeline/stage.js';
import { createInferenceHandler, type InferenceDependencies, type InferenceHandler, type InferenceRequest, type InferenceRouteOptions } from '../inference-handler.js';
import { detectImageType, readMultipartBody } from '../multipart-body.js';
import { openApiSchema } from '../openapi-schema.js';

const JSON_SCHEMAS: Partial<Record<Operation, z.ZodType>> = {
  chat: chatRequestSchema,
  completion: completionRequestSchema,
  embedding: embeddingRequestSchema,
  image_generation: imageGenerationRequestSchema,
  speech: speechRequestSchema,
  video: videoRequestSchema,
  moderation: moderationRequestSchema,
  rerank: rerankRequestSchema,
  ocr: ocrRequestSchema,
};

/** Hand-written checks for the commonest bodies, ahead of the schema (inference-handler.ts, `quickCheck`). */
const QUICK_CHECKS: Partial<Record<Operation, (body: unknown) => boolean>> = {
  chat: isCommonChatRequest,
};

const TAGS: Record<Operation, string> = {
  chat: 'Text',
  completion: 'Text',
  embedding: 'Utility',
  image_generation: 'Images',
  image_edit: 'Images',
  speech: 'Audio',
  transcription: 'Audio',
  video: 'Video',
  moderation: 'Utility',
  rerank: 'Utility',
  ocr: 'Utility',
};

/** OpenAI's limit for gpt-image-1 edits; providers taking fewer answer their own 400. */
const MAX_EDIT_IMAGES = 16;

/** An image edit's form: one or several `image` files (`image[]`, as the SDK sends a list), and an optional `mask`. */
async function readImageEdit(request: InferenceRequest) {
  const { fields, files } = await readMultipartBody(request, ['image', 'mask'], { repeatable: ['image'] });
  if (!files.image) throw new GatewayError('invalid_request', "Missing required parameter: 'image' (a PNG, JPEG or WebP file).", { param: 'image' });
  const images = [files.image, ...(files.image.more ?? [])];
  if (images.length > MAX_EDIT_IMAGES) {
    throw new GatewayError('invalid_request', `An image edit takes at most ${MAX_EDIT_IMAGES} 'image' files; this form has ${images.length}.`, { param: 'image' });
  }
  for (const image of images) {
    if (!detectImageType(image.bytes)) {
      // Among several images, the client needs to know which one.
      const which = images.length > 1 ? ` '${image.filename}'` : '';
      throw new GatewayError('invalid_request', `The 'image' file${which} is not a PNG, JPEG or WebP image.`, { param: 'image' });
    }
  }
  if (files.mask && !detectImageType(files.mask.bytes)) {
    throw new GatewayError('invalid_request', "The 'mask' file is not a PNG, JPEG or WebP image.", { param: 'mask' });
  }
  return { fields, files };
}

async function readTranscription(request: InferenceRequest) {
  const { fields, files } = await readMultipartBody(request, ['file']);
  if (!files.file) throw new GatewayError('invalid_request', "Missing required parameter: 'file' (the audio to transcribe).", { param: 'file' });
  if (files.file.bytes.length === 0) throw new GatewayError('invalid_request', 'The uploaded audio file is empty.', { param: 'file' });
  return { fields, files };
}

/**
 * A video request sent as a form (what the OpenAI SDK's videos.create sends): its text fields. A
 * reference image (`input_reference`) is refused: no video upstream here takes one yet. As a file
 * it is refused unread; the SDK sends its object form as `input_reference[image_url]` (or `[file_id]`).
 */
async function readVideoForm(request: InferenceRequest) {
  const { fields } = await readMultipartBody(request, []);
  if (Object.keys(fields).some((name) => name === 'input_reference' || name.startsWith('input_reference['))) {
    throw new GatewayError('invalid_request', `Invalid value for 'input_reference': ${VIDEO_REFERENCE_UNSUPPORTED}.`, { param: 'input_reference' });
  }
  return { fields, files: {} };
}

/** The operations that take multipart/form-data (videos take JSON as well). */
const MULTIPART_READERS: Partial<Record<Operation, InferenceRouteOptions['readMultipart']>> = {
  image_edit: readImageEdit,
  transcription: readTranscription,
  video: readVideoForm,
};

export interface InferenceRoutesOptions {
  pipelines: Record<Operation, Next>;
  /** Default model per operation for requests that may omit it (moderations, image edits). */
  defaultModels: Partial<Record<Operation, () => string | undefined>>;
}

/**
 * Registers POST routes for every inference operation of the spec's endpoint table. Returns the
 * handlers of the JSON ones by path, for the direct JSON routes (direct-json-routes.ts).
 */
export function registerInferenceRoutes(
  app: FastifyInstance,
  dependencies: InferenceDependencies,
  options: InferenceRoutesOptions,
): Map<string, InferenceHandler> {
  const jsonHandlers = new Map<string, InferenceHandler>();
  for (const operation of Object.keys(OPERATION_PATHS) as Operation[]) {
    const multipart = MULTIPART_READERS[operation];
    const alsoJson = operation === 'video';
    const schema = JSON_SCHEMAS[operation] ?? (operation === 'image_edit' ? imageEditFieldsSchema : transcriptionFieldsSchema);
    const handler = createInferenceHandler(
      {
        operation,
        schema,
        quickCheck: QUICK_CHECKS[operation],
        pipeline: options.pipelines[operation],
        readMultipart: multipart,
        alsoJson,
        defaultModel: options.defaultModels[operation],
        identityHeaders: operation === 'chat',
      },
      dependencies,
    );
    app.post(OPERATION_PATHS[operation], {
      schema: {
        tags: [TAGS[operation]],
        summary: `${operation.replace('_', ' ')} (OpenAI-compatible)`,
        security: [{ bearerAuth: [] }],
        ...(multipart && !alsoJson ? { consumes: ['multipart/form-data'] } : { body: openApiSchema(schema) }),
        ...(alsoJson ? { consumes: ['application/json', 'multipart/form-data'] } : {}),
      },
      handler,
    });
    if (!multipart || alsoJson) jsonHandlers.set(OPERATION_PATHS[operation], handler);
  }
  return jsonHandlers;
}
