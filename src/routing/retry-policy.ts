import type { GatewayError } from '../errors/gateway-error.js';

/**
 * How hard the router tries before giving up (docs/routing.md "Retries").
 * Attempts go in rounds: round 0 tries each deployment of the model once, in strategy order, with no
 * wait between them (failover is immediate); rounds 1..maxRetries retry the deployments that failed
 * with a retryable error, each after a backoff. So a model with one deployment is tried at most
 * 1 + maxRetries times, and one with n deployments at most n · (1 + maxRetries) times.
 */
export interface RetryPolicy {
  /** Retries per deployment after its first attempt. */
  maxRetries: number;
  /** First backoff ceiling; doubles each round. */
  baseDelayMs: number;
  /** Largest backoff ceiling. */
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the deployment is given up for this call. */
  maxRetryAfterMs: number;
  /** No attempt starts, and no backoff is waited, past this much time since routing began. */
  maxElapsedMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 2,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 30_000,
  maxElapsedMs: 120_000,
};

/**
 * Exponential backoff with full jitter: a uniform draw in [0, min(maxDelay, base · 2^(retry−1))).
 * Full jitter spreads retries of many clients apart best (AWS Architecture Blog, "Exponential
 * Backoff And Jitter", 2015). `retry` counts from 1.
 */
export function backoffDelayMs(retry: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(random() * ceiling);
}

/** The wait an upstream asked for (Retry-After, kept by adapters as details.retry_after_seconds), in ms. */
export function retryAfterMs(error: GatewayError): number | undefined {
  const seconds = Number(error.details?.retry_after_seconds);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds * 1000) : undefined;
}
