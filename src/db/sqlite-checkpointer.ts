import type SQLite from 'better-sqlite3';
import { startDatabaseWorker } from './database-worker.js';

export interface SqliteCheckpointer {
  /** Stops the thread after a last checkpoint; SQLite's own checkpoints are back on. */
  close(): Promise<void>;
}

/** SQLite's default: a commit that takes the log past this many pages also checkpoints it. */
const SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES = 1000;
/** Uncopied log pages (4 KiB each) after one of the thread's rounds that count as falling behind. */
const BEHIND_PAGES = 4000;

/**
 * Moves write-ahead-log checkpoints of the embedded file off the main thread when the main thread
 * writes the batches itself (one CPU): a worker thread checkpoints every `intervalMs`
 * (src/db/sqlite-checkpoint-worker.ts), and the main connection stops checkpointing inside its
 * commits. On one CPU the thread still shares the core, but the kernel interleaves it with the
 * event loop at a lower priority, and requests no longer wait for the whole copy.
 *
 * If the thread fails or stops, the main connection's checkpoints come back on, so the log never
 * grows without bound.
 */
export function startSqliteCheckpointer(
  connection: SQLite.Database,
  path: string,
  options: { intervalMs: number; behindPages?: number },
): SqliteCheckpointer {
  const worker = startDatabaseWorker(
    'sqlite-checkpoint-worker',
    { path, intervalMs: options.intervalMs, behindPages: options.behindPages ?? BEHIND_PAGES },
    { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 },
  );
  worker.unref();
  let running = true;
  const mainConnectionCheckpoints = (on: boolean) => {
    if (connection.open) connection.pragma(`wal_autocheckpoint = ${on ? SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES : 0}`);
  };
  const fallBack = () => {
    if (!running) return;
    running = false;
    mainConnectionCheckpoints(true);
  };
  mainConnectionCheckpoints(false);
  worker.on('message', (message: { error?: string; behind?: boolean }) => {
    if (message.error) {
      process.emitWarning(`SQLite checkpoint thread: ${message.error}; checkpoints are back on the main connection`);
      fallBack();
      void worker.terminate();
    } else if (running && message.behind !== undefined) {
      // At its low priority the thread gets little of a saturated CPU: the main connection
      // checkpoints as SQLite would by default until the thread has caught up.
      mainConnectionCheckpoints(message.behind);
    }
  });
  worker.on('error', (error) => {
    // The thread failed to start or threw (e.g. its file missing from a build): say so, as above.
    if (running) process.emitWarning(`SQLite checkpoint thread failed: ${error.message}; checkpoints are back on the main connection`);
    fallBack();
  });
  worker.on('exit', fallBack);
  return {
    async close() {
      if (!running) return;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.ref();
      worker.postMessage({ stop: true });
      await exited;
    },
  };
}
