import { cl100k } from '../tokenizer/cl100k.js';

/**
 * Prompt token counts for credit reservations and TPM estimates, with the cl100k_base encoding
 * (src/tokenizer/cl100k.ts): a real BPE count, a close estimate for every current model (o200k models usually need
 * a few percent fewer tokens, so the hold errs high) and good enough for a hold that is settled from
 * the upstream's own count. cl100k's tables take about 30 MB less memory than o200k's, and gw loads
 * exactly one encoding. Tokenizing is the most expensive step of metering, so counts of strings
 * that recur (system prompts, tool schemas, short fixed instructions) are kept in a small map owned
 * by the counter instance, bounded by entries and by the characters it holds, oldest out first.
 */
export interface TokenCounter {
  count(text: string): number;
  /** Messages as the chat API sends them: contents, names, tool calls, plus per-message overhead. */
  countMessages(messages: ReadonlyArray<Record<string, unknown>>, tools?: unknown): number;
  /**
   * The prompt count of one request body, computed once: the rate limiter and the meter both need
   * it, and stages pass the same body object along unless they change it.
   */
  once(request: object, compute: () => number): number;
}

export interface TokenCounterOptions {
  /** Strings at least this long are cached (shorter ones cost less to count than to look up). */
  cacheMinLength?: number;
  cacheEntries?: number;
  /** Characters held by the cache at most, so a run of very long prompts cannot grow memory. */
  cacheMaxChars?: number;
  /** The count of one string; cl100k by default (tests pass a counting stand-in). */
  countTokens?: (text: string) => number;
}

/** OpenAI's chat format adds about 3 tokens per message (role, separators) and 3 to prime the reply; we round up to 4. */
const PER_MESSAGE_TOKENS = 4;
const REPLY_PRIMING_TOKENS = 3;
/** A high-detail 2048×2048 image is 1105 tokens on GPT-4o (85 + 6 tiles × 170); larger models bill similar amounts. */
const IMAGE_PART_TOKENS = 1105;
/** Audio input is about 10 tokens per second; 16 kB per second bounds common encodings from below. */
const AUDIO_BYTES_PER_TOKEN = 1600;

function cl100kCounter(): (text: string) => number {
  const tokenizer = cl100k();
  return (text) => tokenizer.countTokens(text);
}

export function createTokenCounter(options: TokenCounterOptions = {}): TokenCounter {
  // 16 characters: a short system prompt ("You are a helpful assistant.") recurs on every call,
  // and its regex split and merges cost more than a map lookup; below that, counting is cheaper.
  const minLength = options.cacheMinLength ?? 16;
  const maxEntries = options.cacheEntries ?? 4096;
  const maxChars = options.cacheMaxChars ?? 4_000_000;
  const cache = new Map<string, number>();
  let cachedChars = 0;
  const countTokens = options.countTokens ?? cl100kCounter();

  function count(text: string): number {
    if (text.length === 0) return 0;
    if (text.length < minLength) return countTokens(text);
    const cached = cache.get(text);
    if (cached !== undefined) return cached;
    const tokens = countTokens(text);
    if (text.length > maxChars / 4) return tokens;
    while (cache.size > 0 && (cache.size >= maxEntries || cachedChars + text.length > maxChars)) {
      const oldest = cache.keys().next().value as string;
      cache.delete(oldest);
      cachedChars -= oldest.length;
    }
    cache.set(text, tokens);
    cachedChars += text.length;
    return tokens;
  }

  function countPart(part: Record<string, unknown>): number {
    if (typeof part.text === 'string') return count(part.text);
    if (part.type === 'image_url' || part.type === 'image') return IMAGE_PART_TOKENS;
    const audio = part.input_audio as { data?: unknown } | undefined;
    if (audio && typeof audio.data === 'string') return Math.ceil((audio.data.length * 0.75) / AUDIO_BYTES_PER_TOKEN);
    return 0;
  }

  function countMessages(messages: ReadonlyArray<Record<string, unknown>>, tools?: unknown): number {
    let total = REPLY_PRIMING_TOKENS;
    for (const message of messages) {
      total += PER_MESSAGE_TOKENS;
      const content = message.content;
      if (typeof content === 'string') total += count(content);
      else if (Array.isArray(content)) for (const part of content) total += countPart(part as Record<string, unknown>);
      if (typeof message.name === 'string') total += count(message.name);
      const toolCalls = message.tool_calls;
      if (Array.isArray(toolCalls)) {
        for (const call of toolCalls as Array<{ function?: { name?: string; arguments?: string } }>) {
          total += PER_MESSAGE_TOKENS + count(call.function?.name ?? '') + count(call.function?.arguments ?? '');
        }
      }
    }
    if (Array.isArray(tools) && tools.length > 0) total += count(JSON.stringify(tools));
    return total;
  }

  const perRequest = new WeakMap<object, number>();
  function once(request: object, compute: () => number): number {
    let tokens = perRequest.get(request);
    if (tokens === undefined) perRequest.set(request, (tokens = compute()));
    return tokens;
  }

  return { count, countMessages, once };
}
