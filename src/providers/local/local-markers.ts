import { GatewayError } from '../../errors/gateway-error.js';
import type { ErrorCode } from '../../errors/error-codes.js';
import type { CallSignal } from '../../lib/call-signal.js';

/**
 * Prompt markers that make the offline provider behave like a failing or slow upstream, so tests of
 * retries, fallbacks, timeouts and cancellation need no fake server:
 * `[local:fail:<status>]` throws what an upstream answering <status> would, and
 * `[local:sleep:<ms>]` waits (abortably) before answering.
 */
export interface LocalMarkers {
  failStatus?: number;
  sleepMs?: number;
}

const FAIL_PATTERN = /\[local:fail:(\d{3})\]/;
const SLEEP_PATTERN = /\[local:sleep:(\d{1,7})\]/;
const ANY_MARKER = /\[local:(?:fail|sleep):\d+\]\s*/g;

export function readMarkers(text: string): LocalMarkers {
  const markers: LocalMarkers = {};
  const fail = FAIL_PATTERN.exec(text);
  if (fail) markers.failStatus = Number(fail[1]);
  const sleep = SLEEP_PATTERN.exec(text);
  if (sleep) markers.sleepMs = Number(sleep[1]);
  return markers;
}

export function stripMarkers(text: string): string {
  return text.replace(ANY_MARKER, '').trim();
}

/** Maps an upstream HTTP status to the code an HTTP adapter would produce for it. */
export function upstreamFailure(status: number): GatewayError {
  let code: ErrorCode;
  if (status === 400 || status === 404 || status === 422) code = 'upstream_bad_request';
  else if (status === 401 || status === 403) code = 'upstream_authentication';
  else if (status === 408) code = 'upstream_request_timeout';
  else if (status === 413) code = 'payload_too_large';
  else if (status === 429) code = 'upstream_rate_limited';
  else if (status === 503 || status === 529) code = 'upstream_unavailable';
  else if (status === 504) code = 'upstream_timeout';
  else code = 'upstream_bad_response';
  return new GatewayError(code, `The local provider simulated an upstream failure with status ${status}.`, {
    provider: 'local',
    details: { upstream_status: status },
    headers: status === 429 ? { 'retry-after': '1' } : undefined,
  });
}

/** The error a call stopped by its signal ends with: the signal's reason when it is an Error. */
export function abortError(signal: CallSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new GatewayError('upstream_timeout', 'The local provider call was aborted.', { provider: 'local' });
}

export function sleep(ms: number, signal: CallSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(abortError(signal));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Applies the markers found in `text`: waits first, then fails if asked. */
export async function applyMarkers(text: string, signal: CallSignal): Promise<void> {
  const markers = readMarkers(text);
  if (markers.sleepMs !== undefined) await sleep(markers.sleepMs, signal);
  if (signal.aborted) throw abortError(signal);
  if (markers.failStatus !== undefined) throw upstreamFailure(markers.failStatus);
}
