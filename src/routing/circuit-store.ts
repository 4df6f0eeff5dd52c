import type { Awaitable } from '../lib/awaitable.js';

/**
 * Circuit state per deployment. The store owns the transitions so they are atomic (one Lua script
 * each in Redis): several gateway instances sharing a Redis see and move one circuit.
 *
 *   closed ──(N consecutive failures, or failure rate ≥ R over ≥ M calls in the window)──▶ open
 *   open ──(cool-down passed; the first caller gets the probe)──▶ half_open
 *   half_open ──probe succeeds──▶ closed      half_open ──probe fails──▶ open (cool-down restarts)
 */
export type CircuitStateName = 'closed' | 'open' | 'half_open';

export interface CircuitState {
  state: CircuitStateName;
  consecutiveFailures: number;
  windowFailures: number;
  windowCalls: number;
  /** Epoch ms when the circuit last opened; null while closed. */
  openedAt: number | null;
  /** The error code that opened it. */
  reason: string | null;
}

export interface CircuitOptions {
  /** Consecutive failures that open a closed circuit. */
  consecutiveFailures: number;
  /** Failure fraction over the window that opens it, once `minimumCalls` calls were seen. */
  failureRate: number;
  minimumCalls: number;
  windowMs: number;
  /** Time an open circuit waits before letting one probe through. */
  coolDownMs: number;
}

export const DEFAULT_CIRCUIT_OPTIONS: CircuitOptions = {
  consecutiveFailures: 5,
  failureRate: 0.5,
  minimumCalls: 20,
  windowMs: 60_000,
  coolDownMs: 30_000,
};

/** `probe`: the circuit is half open and this caller holds the single trial call. */
export type CircuitPermission = 'allowed' | 'probe' | 'denied';

/**
 * `acquire` and `recordSuccess`, asked on every call, answer at once when the store can (in
 * memory; a shared store's recently confirmed closed circuit and its batched successes) and with a
 * promise only when they must ask the shared state.
 */
export interface CircuitStore {
  /** May a call go to this deployment now? Grants at most one probe per cool-down. */
  acquire(deploymentId: string, now: number): Awaitable<CircuitPermission>;
  recordSuccess(deploymentId: string, now: number): Awaitable<void>;
  /** Returns true when this failure opened a closed circuit (the moment to announce an outage). */
  recordFailure(deploymentId: string, now: number, reason: string): Promise<boolean>;
  read(deploymentId: string, now: number): Promise<CircuitState>;
  /** Sends what a shared store still holds in memory (on shutdown). */
  flush?(): Promise<void>;
}

export function closedCircuit(): CircuitState {
  return { state: 'closed', consecutiveFailures: 0, windowFailures: 0, windowCalls: 0, openedAt: null, reason: null };
}
