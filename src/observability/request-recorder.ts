import type { BulkInsert } from '../db/bulk-insert.js';
import type { RequestLogTable } from '../db/schema.js';
import { createBatchWriter, type BatchWriter } from '../lib/batch-writer.js';
import { newTimeOrderedId } from '../lib/ids.js';

export type RequestLogEntry = Omit<RequestLogTable, 'id'>;

export type RequestListener = (entry: RequestLogEntry) => void;

/**
 * The request log: one row per request by key alias (never the key), written in batches off the
 * hot path. Listeners (metrics, experiment statistics) see each entry as it is recorded.
 */
export interface RequestRecorder {
  record(entry: RequestLogEntry): void;
  onRecord(listener: RequestListener): () => void;
  flush(): Promise<void>;
  close(): Promise<void>;
  readonly pending: number;
}

export interface RequestRecorderOptions {
  intervalMs: number;
  batchSize: number;
  onError?(error: unknown): void;
}

export function createSqlRequestRecorder(bulkInsert: BulkInsert, options: RequestRecorderOptions): RequestRecorder {
  const listeners = new Set<RequestListener>();
  const writer: BatchWriter<RequestLogTable> = createBatchWriter({
    intervalMs: options.intervalMs,
    maxBatch: options.batchSize,
    write: async (rows) => {
      await bulkInsert('request_log', rows);
    },
    onError: (error) => options.onError?.(error),
  });
  return {
    record(entry) {
      writer.add({ id: newTimeOrderedId(), ...entry });
      for (const listener of listeners) {
        try {
          listener(entry);
        } catch (error) {
          options.onError?.(error);
        }
      }
    },
    onRecord(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    flush: () => writer.flush(),
    close: () => writer.close(),
    get pending() {
      return writer.pending;
    },
  };
}
