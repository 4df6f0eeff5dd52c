import type { WindowState } from './counter-store.js';

/**
 * OpenAI's reset format: "20ms", "1.5s", "6m0s". Rounded up to the millisecond, so a client that
 * waits that long finds the window reset. Whole-number arithmetic only: formatting fractional
 * seconds through toFixed and back cost more than the rest of the rate-limit headers on a call,
 * and rounded 119,999.5 ms to "1m60s".
 */
export function formatResetDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms));
  if (total < 1000) return `${total}ms`;
  const minutes = Math.floor(total / 60_000);
  const rest = total - minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const millis = rest - seconds * 1000;
  const text = millis === 0 ? `${seconds}s` : `${seconds}.${millisecondDigits(millis)}s`;
  return minutes === 0 ? text : `${minutes}m${text}`;
}

/** 1..999 ms as the digits after a decimal point, without trailing zeros: 500 → "5", 50 → "05", 5 → "005". */
function millisecondDigits(millis: number): string {
  let digits = String(millis).padStart(3, '0');
  while (digits.endsWith('0')) digits = digits.slice(0, -1);
  return digits;
}

/**
 * Writes the x-ratelimit-* headers: limit and remaining of the tightest request and token windows,
 * and when a request would next be admitted by the request windows (RPM and TPS) and by the token
 * windows ("0ms" while there is room: docs/rate-limits.md).
 */
export function writeRateLimitHeaders(
  headers: Record<string, string>,
  requests: WindowState,
  requestsResetMs: number,
  tokens: WindowState | undefined,
  tokensResetMs: number,
): void {
  headers['x-ratelimit-limit-requests'] = String(requests.limit);
  headers['x-ratelimit-remaining-requests'] = String(requests.remaining);
  headers['x-ratelimit-reset-requests'] = formatResetDuration(requestsResetMs);
  if (tokens) {
    headers['x-ratelimit-limit-tokens'] = String(tokens.limit);
    headers['x-ratelimit-remaining-tokens'] = String(tokens.remaining);
    headers['x-ratelimit-reset-tokens'] = formatResetDuration(tokensResetMs);
  }
}
