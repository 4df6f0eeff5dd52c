import { z } from 'zod';
import type { UsageBody } from './chat.js';

/** Legacy text completions (SPEC "Text completion"). max_tokens defaults to 16. */
export const completionRequestSchema = z.looseObject({
  model: z.string().min(1),
  prompt: z.union([z.string(), z.array(z.string()).min(1)]),
  max_tokens: z.number().int().min(1).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  n: z.number().int().min(1).max(128).nullish(),
  stream: z.boolean().nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(4), z.null()]).optional(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  seed: z.number().int().nullish(),
  user: z.string().max(200).nullish(),
  gw_cache: z.boolean().nullish(),
});
export type CompletionRequest = z.infer<typeof completionRequestSchema>;

export const COMPLETION_DEFAULT_MAX_TOKENS = 16;

export interface TextCompletion {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  choices: Array<{ text: string; index: number; finish_reason: 'stop' | 'length' | null; logprobs: null }>;
  usage: UsageBody;
}
