import { invalidRequest } from '../../errors/gateway-error.js';
import { MODERATION_CATEGORIES, type ModerationPart, type ModerationRequest, type ModerationResponse } from '../../protocol/moderations.js';
import type { Usage } from '../../protocol/usage.js';
import type { Outcome } from '../../pipeline/stage.js';
import type { Invocation } from '../provider.js';
import { applyMarkers } from './local-markers.js';
import { MODERATION_LEXICON } from './moderation-lexicon.js';
import { countTokens } from './token-pieces.js';

export const MODERATION_FLAG_THRESHOLD = 0.5;

type ModerationResult = ModerationResponse['results'][number];

/** Keyword moderation: each phrase hit raises its category's score; any score ≥ 0.5 flags the input. */
export async function runLocalModeration(invocation: Invocation): Promise<Outcome> {
  const { call, signal } = invocation;
  const request = call.request as unknown as ModerationRequest;
  const inputs = moderatedTexts(request.input);
  await applyMarkers(inputs.join('\n'), signal);
  const body: ModerationResponse = { id: `modr-${call.requestId}`, model: call.model, results: inputs.map(moderateText) };
  const usage: Usage = { inputTokens: inputs.reduce((sum, input) => sum + countTokens(input), 0) };
  return { kind: 'json', body, usage };
}

/**
 * The texts moderated, one result each: a multimodal input (parts) is one text. The keyword model
 * reads text only, so an image part is refused rather than passed as if it had been looked at.
 */
function moderatedTexts(input: ModerationRequest['input']): string[] {
  if (typeof input === 'string') return [input];
  if (input.every((item): item is string => typeof item === 'string')) return input;
  const parts = input as ModerationPart[];
  if (parts.some((part) => part.type === 'image_url')) {
    throw invalidRequest('The local moderation model reads text only; image_url parts need an omni-moderation model.', 'input');
  }
  return [parts.map((part) => (part.type === 'text' ? part.text : '')).join('\n')];
}

export function moderateText(text: string): ModerationResult {
  const lowered = text.toLowerCase();
  const scores: Record<string, number> = {};
  for (const category of MODERATION_CATEGORIES) {
    const hits = MODERATION_LEXICON[category].reduce((sum, phrase) => sum + countPhrase(lowered, phrase), 0);
    // 1 hit → 0.65, 2 → 0.88, 3 → 0.96: one clear phrase is enough to flag, more raise confidence.
    scores[category] = hits === 0 ? 0.0001 : Number((1 - 0.35 ** hits).toFixed(4));
  }
  // A subcategory implies its parent ("harassment/threatening" is harassment too).
  for (const category of MODERATION_CATEGORIES) {
    const parent = category.split('/')[0];
    if (parent !== category && parent in scores) scores[parent] = Math.max(scores[parent], scores[category]);
  }
  const categories: Record<string, boolean> = {};
  for (const category of MODERATION_CATEGORIES) categories[category] = scores[category] >= MODERATION_FLAG_THRESHOLD;
  return { flagged: Object.values(categories).some(Boolean), categories, category_scores: scores };
}

function countPhrase(text: string, phrase: string): number {
  const prefix = phrase.endsWith('*');
  const escaped = (prefix ? phrase.slice(0, -1) : phrase).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])${escaped}${prefix ? '[\\p{L}\\p{N}]*' : '(?![\\p{L}\\p{N}])'}`, 'gu');
  return text.match(pattern)?.length ?? 0;
}
