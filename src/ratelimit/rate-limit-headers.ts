import type { WindowState } from './counter-store.js';

/** OpenAI's reset format: "20ms", "1.5s", "6m0s". */
export function formatResetDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.ceil(ms))}ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${Number(seconds.toFixed(3))}s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes}m${Number((seconds - minutes * 60).toFixed(3))}s`;
}

/** Writes the x-ratelimit-* headers of the request and token windows into `headers`. */
export function writeRateLimitHeaders(headers: Record<string, string>, requests: WindowState, tokens: WindowState | undefined): void {
  headers['x-ratelimit-limit-requests'] = String(requests.limit);
  headers['x-ratelimit-remaining-requests'] = String(requests.remaining);
  headers['x-ratelimit-reset-requests'] = formatResetDuration(requests.resetMs);
  if (tokens) {
    headers['x-ratelimit-limit-tokens'] = String(tokens.limit);
    headers['x-ratelimit-remaining-tokens'] = String(tokens.remaining);
    headers['x-ratelimit-reset-tokens'] = formatResetDuration(tokens.resetMs);
  }
}
