import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';

/**
 * Runs in a worker thread beside a gateway that writes its batches on the main thread (one CPU):
 * copies the write-ahead log back into the database file every `intervalMs` through its own
 * connection, so that work never runs inside a request-path commit. SQLite would otherwise run it
 * in whichever commit passes 1,000 log pages: a 4–10 ms stall of the event loop every few
 * seconds at 500 req/s, the largest single pause in the latency tail.
 *
 * PASSIVE never waits for the main connection: frames it cannot copy yet are left for the next
 * round. The thread reports when it falls behind (or catches up again) so the main connection can
 * checkpoint for it meanwhile.
 */

/** Pages left uncopied after a round at which the thread asks the main connection for help. */
const BEHIND_PAGES = Number(workerData.behindPages);

// The lowest priority (nice 19), for this thread only (Linux's priorities are per thread). At the
// default priority the scheduler favours a thread that mostly sleeps: when it woke for a
// checkpoint on the gateway's only CPU, requests waited behind the whole copy, which is what this
// thread is for avoiding. Where the priority cannot be lowered, it runs at the default one.
try {
  setPriority(19);
} catch {
  // Not permitted here: keep the default priority.
}

const connection = new SQLite(workerData.path as string);
connection.pragma('busy_timeout = 5000');
// It reads log frames and writes pages once: no page cache to speak of is needed.
connection.pragma('cache_size = -256');
connection.pragma('wal_autocheckpoint = 0');

let behind = false;
function checkpoint(): void {
  try {
    const [result] = connection.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number; checkpointed: number }>;
    const nowBehind = result !== undefined && result.log - result.checkpointed > BEHIND_PAGES;
    if (nowBehind !== behind) {
      behind = nowBehind;
      parentPort!.postMessage({ behind });
    }
  } catch (error) {
    // Busy or locked: the next round tries again. Anything else is reported; the main thread then
    // turns SQLite's own checkpoints back on.
    const code = (error as { code?: string }).code;
    if (code !== 'SQLITE_BUSY' && code !== 'SQLITE_LOCKED') parentPort!.postMessage({ error: error instanceof Error ? error.message : String(error) });
  }
}

const timer = setInterval(checkpoint, Number(workerData.intervalMs));

parentPort!.on('message', (message: { stop?: boolean }) => {
  if (!message.stop) return;
  clearInterval(timer);
  try {
    checkpoint();
  } finally {
    connection.close();
    parentPort!.close();
  }
});
