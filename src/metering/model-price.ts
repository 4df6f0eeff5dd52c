import { z } from 'zod';

/**
 * A model's prices, as USD decimal strings (exact; parsed to integer nano-USD arithmetic in
 * compute-cost.ts). Token prices are per million tokens. Absent classes fall back as documented in
 * docs/money.md (reasoning → output, cached/cache-write/audio/image input → input); a call that
 * needs a unit with no price at all is unpriced.
 */
const usd = z.string().regex(/^\d+(\.\d{1,12})?$/, 'a USD amount as a decimal string, e.g. "0.15"');

export const modelPriceSchema = z.object({
  inputPerMillion: usd.optional(),
  cachedInputPerMillion: usd.optional(),
  cacheWriteInputPerMillion: usd.optional(),
  outputPerMillion: usd.optional(),
  reasoningPerMillion: usd.optional(),
  audioInputPerMillion: usd.optional(),
  audioOutputPerMillion: usd.optional(),
  imageInputPerMillion: usd.optional(),
  /** Per image, keyed "1024x1024" or "1024x1024/high"; "default" applies to any size. */
  perImage: z.record(z.string(), usd).optional(),
  speechPerMillionCharacters: usd.optional(),
  transcriptionPerMinute: usd.optional(),
  perSearchUnit: usd.optional(),
  perOcrPage: usd.optional(),
  perVideoSecond: usd.optional(),
  /** Largest completion the model gives; used to reserve credits when max_tokens is absent. */
  maxOutputTokens: z.number().int().min(1).optional(),
  contextWindow: z.number().int().min(1).optional(),
});

export type ModelPrice = z.infer<typeof modelPriceSchema>;
