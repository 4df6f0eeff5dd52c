import { z } from 'zod';

export const IMAGE_SIZES = ['1024x1024', '1024x1536', '1536x1024'] as const;
export type ImageSize = (typeof IMAGE_SIZES)[number];

/** SPEC "Image": size one of three, n 1 to 4. */
export const imageGenerationRequestSchema = z.looseObject({
  model: z.string().min(1),
  prompt: z.string().min(1).max(32000),
  size: z.enum(IMAGE_SIZES).nullish(),
  n: z.number().int().min(1).max(4).nullish(),
  quality: z.enum(['low', 'medium', 'high', 'standard', 'hd', 'auto']).nullish(),
  response_format: z.enum(['b64_json']).nullish(),
  user: z.string().max(200).nullish(),
});
export type ImageGenerationRequest = z.infer<typeof imageGenerationRequestSchema>;

/** Fields of the multipart edit request, after the files are read. */
export interface ImageEditRequest {
  model: string;
  prompt: string;
  image: { bytes: Buffer; filename: string; contentType: string };
  mask?: { bytes: Buffer; filename: string; contentType: string };
  size?: ImageSize;
  n?: number;
}

export interface ImageResponse {
  created: number;
  data: Array<{ b64_json: string; revised_prompt?: string }>;
  usage?: unknown;
}
