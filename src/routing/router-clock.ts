import type { CallSignal } from '../lib/call-signal.js';

/** Time as the router sees it; injected so tests can check backoff spacing exactly. */
export interface RouterClock {
  /** Monotonic milliseconds, the same scale as GatewayCall.startedAt (performance.now()). */
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal: CallSignal): Promise<void>;
}

export function createSystemClock(): RouterClock {
  return {
    now: () => performance.now(),
    sleep(ms, signal) {
      if (signal.aborted) return Promise.reject(signal.reason);
      if (ms <= 0) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const onAbort = () => {
          clearTimeout(timer);
          reject(signal.reason);
        };
        const timer = setTimeout(() => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        }, ms);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    },
  };
}
