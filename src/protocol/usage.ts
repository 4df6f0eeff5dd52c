import type { UsageBody } from './chat.js';

/**
 * What a call consumed, split into the classes that are priced differently. Token classes are
 * disjoint: `inputTokens` excludes cached-read and cache-write tokens, `outputTokens` excludes
 * reasoning tokens, so each token is priced exactly once (the peers' most reported billing bugs
 * come from pricing cached or reasoning tokens twice or at the wrong rate).
 */
export interface Usage {
  inputTokens?: number;
  cachedInputTokens?: number;
  cacheWriteInputTokens?: number;
  outputTokens?: number;
  reasoningTokens?: number;
  audioInputTokens?: number;
  audioOutputTokens?: number;
  imageInputTokens?: number;
  images?: Array<{ size: string; quality: string; count: number }>;
  speechCharacters?: number;
  transcriptionSeconds?: number;
  searchUnits?: number;
  ocrPages?: number;
  videoSeconds?: number;
  /** Cost the upstream reported itself, in nano-USD; used instead of our prices when present. */
  reportedCostNanos?: number;
}

/** Prompt/completion totals as OpenAI counts them (reasoning inside completion, cached inside prompt). */
export function usageTotals(usage: Usage): { promptTokens: number; completionTokens: number } {
  const promptTokens =
    (usage.inputTokens ?? 0) +
    (usage.cachedInputTokens ?? 0) +
    (usage.cacheWriteInputTokens ?? 0) +
    (usage.audioInputTokens ?? 0) +
    (usage.imageInputTokens ?? 0);
  const completionTokens = (usage.outputTokens ?? 0) + (usage.reasoningTokens ?? 0) + (usage.audioOutputTokens ?? 0);
  return { promptTokens, completionTokens };
}

/**
 * A total less the parts reported inside it, never below 0 when the parts exceed it; a negative
 * total is kept as it is, so that the caller sees a broken usage and rejects it
 * (providers/http/upstream-usage.ts) instead of billing it as 0.
 */
function remainder(total: number, parts: number): number {
  return total < 0 ? total : Math.max(0, total - parts);
}

/** Splits an OpenAI usage body into disjoint classes. */
export function usageFromOpenAI(body: UsageBody | null | undefined): Usage | undefined {
  if (!body) return undefined;
  const cached = body.prompt_tokens_details?.cached_tokens ?? 0;
  const cacheWrite = body.prompt_tokens_details?.cache_creation_tokens ?? 0;
  const audioIn = body.prompt_tokens_details?.audio_tokens ?? 0;
  const reasoning = body.completion_tokens_details?.reasoning_tokens ?? 0;
  const audioOut = body.completion_tokens_details?.audio_tokens ?? 0;
  const usage: Usage = {
    inputTokens: remainder(body.prompt_tokens ?? 0, cached + cacheWrite + audioIn),
    outputTokens: remainder(body.completion_tokens ?? 0, reasoning + audioOut),
  };
  if (cached) usage.cachedInputTokens = cached;
  if (cacheWrite) usage.cacheWriteInputTokens = cacheWrite;
  if (audioIn) usage.audioInputTokens = audioIn;
  if (reasoning) usage.reasoningTokens = reasoning;
  if (audioOut) usage.audioOutputTokens = audioOut;
  return usage;
}

/** The OpenAI usage body for a usage, for responses we build ourselves. */
export function usageToOpenAI(usage: Usage): UsageBody {
  const { promptTokens, completionTokens } = usageTotals(usage);
  const body: UsageBody = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
  if (usage.cachedInputTokens || usage.cacheWriteInputTokens || usage.audioInputTokens) {
    body.prompt_tokens_details = { cached_tokens: usage.cachedInputTokens ?? 0 };
    if (usage.cacheWriteInputTokens) body.prompt_tokens_details.cache_creation_tokens = usage.cacheWriteInputTokens;
    if (usage.audioInputTokens) body.prompt_tokens_details.audio_tokens = usage.audioInputTokens;
  }
  if (usage.reasoningTokens || usage.audioOutputTokens) {
    body.completion_tokens_details = { reasoning_tokens: usage.reasoningTokens ?? 0 };
    if (usage.audioOutputTokens) body.completion_tokens_details.audio_tokens = usage.audioOutputTokens;
  }
  return body;
}
