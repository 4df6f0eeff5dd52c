import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { EventBus } from '../lib/event-bus.js';
import type { ChangeFeed } from '../lib/change-feed.js';
import { cacheGuardrailStore } from './cached-guardrail-store.js';
import { createBatchWriter } from '../lib/batch-writer.js';
import type { Stage } from '../pipeline/stage.js';
import type { GuardedPost } from './guardrail-webhook.js';
import { createInputGuardrailStage } from './input-guardrail-stage.js';
import { createOutputGuardrailStage } from './output-guardrail-stage.js';
import { createSqlGuardrailStore, type GuardrailLogEntry, type GuardrailStore } from './sql-guardrail-store.js';

export interface GuardrailsOptions {
  db: Kysely<Database>;
  eventBus: EventBus;
  /** When given, the request path reads guardrail lists from memory, invalidated on change. */
  changes?: ChangeFeed;
  /** SSRF-guarded POST for webhook guardrails (guardedPostFrom(alerting.http)). */
  post?: GuardedPost;
  logFlushIntervalMs?: number;
  logBatchSize?: number;
  onError?(error: unknown, context: string): void;
  /** A webhook guardrail that failed (the call gets a 503, and nothing is logged as a block). */
  onWarning?(context: Record<string, unknown>, message: string): void;
}

export interface Guardrails {
  store: GuardrailStore;
  logWriter: { add(entry: GuardrailLogEntry): void; flush(): Promise<void> };
  inputStage: Stage;
  outputStage: Stage;
  /** Flushes the trigger log. */
  close(): Promise<void>;
}

/** Wires the guardrail store, the batched trigger log and the two stages. */
export function createGuardrails(options: GuardrailsOptions): Guardrails {
  const sqlStore = createSqlGuardrailStore(options.db);
  const store = options.changes ? cacheGuardrailStore(sqlStore, options.changes) : sqlStore;
  const logWriter = createBatchWriter<GuardrailLogEntry>({
    intervalMs: options.logFlushIntervalMs ?? 1000,
    maxBatch: options.logBatchSize ?? 500,
    write: (entries) => store.appendLogs(entries),
    onError: (error) => options.onError?.(error, 'guardrail log write failed; will retry'),
  });
  const deps = { store, eventBus: options.eventBus, logWriter, post: options.post, warn: options.onWarning };
  return {
    store,
    logWriter,
    inputStage: createInputGuardrailStage(deps),
    outputStage: createOutputGuardrailStage(deps),
    close: () => logWriter.close(),
  };
}
