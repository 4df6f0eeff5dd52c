import { type BatchWriter, createBatchWriter } from '../lib/batch-writer.js';
import type { VariantStats } from './experiment-types.js';
import type { ExperimentStore } from './sql-experiment-store.js';

export interface CallOutcomeSample {
  experimentId: string;
  variant: string;
  error: boolean;
  latencyMs: number;
  promptTokens: number;
  completionTokens: number;
  costNanos: number;
}

export interface ExperimentStatsRecorder {
  /** Never waits: samples are summed in memory and flushed in batches. */
  record(sample: CallOutcomeSample): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** Per-variant outcome totals, accumulated in memory and added to SQL every `intervalMs`. */
export function createExperimentStatsRecorder(
  store: Pick<ExperimentStore, 'addStats'>,
  options: { intervalMs?: number; maxBatch?: number; onError?: (error: unknown) => void } = {},
): ExperimentStatsRecorder {
  const writer: BatchWriter<CallOutcomeSample> = createBatchWriter({
    intervalMs: options.intervalMs ?? 1000,
    maxBatch: options.maxBatch ?? 1000,
    onError: options.onError,
    write: (samples) => store.addStats(sumByVariant(samples)),
  });
  return {
    record(sample) {
      try {
        writer.add(sample);
      } catch (error) {
        options.onError?.(error);
      }
    },
    flush: () => writer.flush(),
    close: () => writer.close(),
  };
}

function sumByVariant(samples: CallOutcomeSample[]): Array<VariantStats & { experimentId: string }> {
  const totals = new Map<string, VariantStats & { experimentId: string }>();
  for (const sample of samples) {
    const key = `${sample.experimentId}\u0000${sample.variant}`;
    let total = totals.get(key);
    if (!total) {
      total = { experimentId: sample.experimentId, variant: sample.variant, calls: 0, errors: 0, latencyMsTotal: 0, promptTokens: 0, completionTokens: 0, costNanos: 0 };
      totals.set(key, total);
    }
    total.calls += 1;
    total.errors += sample.error ? 1 : 0;
    total.latencyMsTotal += Math.round(sample.latencyMs);
    total.promptTokens += sample.promptTokens;
    total.completionTokens += sample.completionTokens;
    total.costNanos += sample.costNanos;
  }
  return [...totals.values()];
}
