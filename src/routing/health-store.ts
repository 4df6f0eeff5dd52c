/**
 * Latency and load statistics per deployment, read by the least-latency and least-busy strategies
 * and by the health endpoint. Averages are exponentially weighted (recent calls count more):
 * `next = alpha · sample + (1 − alpha) · previous`.
 */
export interface DeploymentStats {
  /** Moving average of the full call time (non-stream: until the body; stream: until the end). */
  latencyMs: number | null;
  /** Moving average of the time to the first stream event. */
  timeToFirstTokenMs: number | null;
  /** Moving average of failures (1) and successes (0). */
  errorRate: number;
  /** Calls recorded so far (successes and failures). */
  samples: number;
  inFlight: number;
}

export interface CallSample {
  ok: boolean;
  latencyMs?: number;
  timeToFirstTokenMs?: number;
}

export interface HealthStore {
  /**
   * A call to the deployment started. Recorded in memory at once (a shared store sends its
   * changes in batches, see flush), so a call never waits for it.
   */
  begin(deploymentId: string): void;
  /** It ended; a sample is recorded unless the client left (then only the in-flight count drops). Recorded as begin is. */
  end(deploymentId: string, sample: CallSample | null): void;
  read(deploymentIds: readonly string[]): Promise<Map<string, DeploymentStats>>;
  /** Sends what a shared store still holds in memory (on shutdown). */
  flush?(): Promise<void>;
}

export const DEFAULT_EWMA_ALPHA = 0.2;

export function emptyStats(): DeploymentStats {
  return { latencyMs: null, timeToFirstTokenMs: null, errorRate: 0, samples: 0, inFlight: 0 };
}

export function movingAverage(previous: number | null, sample: number, alpha: number): number {
  return previous === null ? sample : alpha * sample + (1 - alpha) * previous;
}
