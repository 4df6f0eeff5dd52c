import { z } from 'zod';

/** SPEC "Embedding". Input order is preserved in data[].index. */
export const embeddingRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([
    z.string(),
    z.array(z.string()).min(1).max(2048),
    // Token arrays are what some SDKs send (openai-python for tiktoken-encoded input).
    z.array(z.number().int()).min(1),
    z.array(z.array(z.number().int())).min(1).max(2048),
  ]),
  encoding_format: z.enum(['float', 'base64']).nullish(),
  dimensions: z.number().int().min(1).max(65536).nullish(),
  user: z.string().max(200).nullish(),
  gw_cache: z.boolean().nullish(),
});
export type EmbeddingRequest = z.infer<typeof embeddingRequestSchema>;

export interface EmbeddingResponse {
  object: 'list';
  data: Array<{ object: 'embedding'; index: number; embedding: number[] | string }>;
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/** OpenAI's base64 form: little-endian float32 bytes. */
export function encodeEmbeddingBase64(vector: readonly number[]): string {
  const buffer = Buffer.alloc(vector.length * 4);
  for (let index = 0; index < vector.length; index++) buffer.writeFloatLE(vector[index], index * 4);
  return buffer.toString('base64');
}

export function decodeEmbeddingBase64(encoded: string): number[] {
  const buffer = Buffer.from(encoded, 'base64');
  const vector: number[] = [];
  for (let offset = 0; offset + 4 <= buffer.length; offset += 4) vector.push(buffer.readFloatLE(offset));
  return vector;
}
