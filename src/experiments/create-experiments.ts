import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Stage } from '../pipeline/stage.js';
import { createAbTestStage } from './ab-test-stage.js';
import { createExperimentStatsRecorder, type ExperimentStatsRecorder } from './experiment-stats-recorder.js';
import { createSqlExperimentStore, type ExperimentStore } from './sql-experiment-store.js';
import { cacheExperimentStore } from './cached-experiment-store.js';
import type { ChangeFeed } from '../lib/change-feed.js';
import type { ChatModelDirectory } from './check-variant-models.js';

export interface Experiments {
  store: ExperimentStore;
  stats: ExperimentStatsRecorder;
  stage: Stage;
  /** Flushes pending per-variant totals. */
  close(): Promise<void>;
}

export function createExperiments(options: {
  db: Kysely<Database>;
  /** The live catalog: a call is not sent to a variant model it no longer serves for chat. */
  models: ChatModelDirectory;
  statsFlushIntervalMs?: number;
  /** When given, active experiments are read from memory, invalidated on change. */
  changes?: ChangeFeed;
  onError?(error: unknown, context: string): void;
}): Experiments {
  const sqlStore = createSqlExperimentStore(options.db);
  const store = options.changes ? cacheExperimentStore(sqlStore, options.changes) : sqlStore;
  const stats = createExperimentStatsRecorder(store, {
    intervalMs: options.statsFlushIntervalMs ?? 1000,
    onError: (error) => options.onError?.(error, 'experiment stats write failed; will retry'),
  });
  return { store, stats, stage: createAbTestStage({ store, stats, models: options.models }), close: () => stats.close() };
}
