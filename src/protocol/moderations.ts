import { z } from 'zod';

/** OpenAI's moderation category names, used as-is (SPEC leaves the set unnamed). */
export const MODERATION_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;
export type ModerationCategory = (typeof MODERATION_CATEGORIES)[number];

/** A part of a multimodal input (omni-moderation): text, or an image by URL or data URI. */
const moderationPartSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text'), text: z.string() }),
  z.looseObject({ type: z.literal('image_url'), image_url: z.looseObject({ url: z.string().min(1) }) }),
]);
export type ModerationPart = z.infer<typeof moderationPartSchema>;

/**
 * OpenAI's three input shapes: one text, up to 32 texts (one result each), or the parts of one
 * multimodal input (one result for them all).
 */
export const moderationRequestSchema = z.looseObject({
  model: z.string().min(1).nullish(),
  input: z.union([z.string(), z.array(z.string()).min(1).max(32), z.array(moderationPartSchema).min(1).max(32)]),
});
export type ModerationRequest = z.infer<typeof moderationRequestSchema>;

export interface ModerationResponse {
  id: string;
  model: string;
  results: Array<{
    flagged: boolean;
    categories: Record<string, boolean>;
    category_scores: Record<string, number>;
  }>;
}
