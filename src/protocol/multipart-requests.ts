import { z } from 'zod';
import { IMAGE_SIZES } from './images.js';

/** Text fields of the multipart image edit request (files are checked separately). */
export const imageEditFieldsSchema = z.looseObject({
  model: z.string().min(1).optional(),
  prompt: z.string().min(1).max(32000),
  size: z.enum(IMAGE_SIZES).optional(),
  n: z.coerce.number().int().min(1).max(4).optional(),
  user: z.string().max(200).optional(),
});

/** Text fields of the multipart transcription request. */
export const transcriptionFieldsSchema = z.looseObject({
  model: z.string().min(1),
  language: z.string().min(2).max(16).optional(),
  prompt: z.string().max(4000).optional(),
  response_format: z.enum(['json', 'text', 'srt', 'verbose_json', 'vtt']).optional(),
  temperature: z.coerce.number().min(0).max(1).optional(),
});
