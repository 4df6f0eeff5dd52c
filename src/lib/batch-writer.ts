/**
 * Collects items in memory and writes them in batches off the hot path: every `intervalMs`, or
 * sooner when `maxBatch` items wait. `add` never waits on I/O. A failed write is retried on the next
 * tick (items stay queued, up to `maxQueued`; past that the oldest are dropped and reported), so a
 * database outage loses nothing until the queue is full. `close()` flushes what is left, retrying
 * for up to `closeTimeoutMs` if the database is away; a crash loses at most one interval's worth
 * (plus whatever an ongoing outage has queued).
 */
export interface BatchWriter<T> {
  add(item: T): void;
  flush(): Promise<void>;
  close(): Promise<void>;
  readonly pending: number;
}

export interface BatchWriterOptions<T> {
  write(items: T[]): Promise<void>;
  intervalMs: number;
  maxBatch: number;
  maxQueued?: number;
  /**
   * How long `close()` keeps retrying while the database is away (default 10 s) before giving up
   * on what is left (reported through onDrop). Keep it within the process manager's stop timeout.
   */
  closeTimeoutMs?: number;
  onError?(error: unknown, items: number): void;
  onDrop?(dropped: number): void;
}

export function createBatchWriter<T>(options: BatchWriterOptions<T>): BatchWriter<T> {
  const maxQueued = options.maxQueued ?? 100_000;
  const closeTimeoutMs = options.closeTimeoutMs ?? 10_000;
  let queue: T[] = [];
  // The batch being written is out of the queue, so a drop for overflow meanwhile cannot misalign it.
  let inFlight = 0;
  let writing: Promise<void> | undefined;
  let closed = false;
  // A tick that finds a write still going leaves what came in since for the next tick.
  const timer = setInterval(() => {
    if (!writing) void flush();
  }, options.intervalMs);
  timer.unref();

  function trim(): void {
    if (queue.length <= maxQueued) return;
    const dropped = queue.length - maxQueued;
    queue = queue.slice(dropped);
    options.onDrop?.(dropped);
  }

  /**
   * Writes what was queued when it started (in batches of `maxBatch`), not what arrives meanwhile:
   * carrying on until the queue was empty wrote the few items that came in during each batch's
   * round trip as a transaction of their own (five or six tiny ones a second per table at 500
   * req/s in Postgres mode). Those wait for the next tick, unless a full batch has built up.
   */
  async function writeOnce(): Promise<void> {
    let remaining = queue.length;
    while (remaining > 0 && queue.length > 0) {
      const batch = queue.splice(0, Math.min(options.maxBatch, remaining));
      remaining -= batch.length;
      inFlight = batch.length;
      try {
        await options.write(batch);
      } catch (error) {
        // Back to the front, in order, for the next tick.
        queue = batch.concat(queue);
        trim();
        options.onError?.(error, batch.length);
        return;
      } finally {
        inFlight = 0;
      }
      if (remaining <= 0 && queue.length >= options.maxBatch) remaining = queue.length;
    }
  }

  /** Writes everything queued now: after the write under way, if there is one. */
  function flush(): Promise<void> {
    if (writing) return writing.then(flush);
    if (queue.length === 0) return Promise.resolve();
    writing = writeOnce().finally(() => {
      writing = undefined;
    });
    return writing;
  }

  return {
    add(item) {
      if (closed) throw new Error('batch writer is closed');
      queue.push(item);
      trim();
      // A write under way carries on with a full batch when it finishes (writeOnce).
      if (queue.length >= options.maxBatch && !writing) void flush();
    },
    flush,
    async close() {
      closed = true;
      clearInterval(timer);
      // Keep trying while the database is away (a restart, a failover): the rows are only in memory.
      const deadline = Date.now() + closeTimeoutMs;
      let delayMs = 100;
      await writing;
      for (;;) {
        await flush();
        if (queue.length === 0 || Date.now() >= deadline) break;
        await new Promise((resolve) => setTimeout(resolve, Math.min(delayMs, Math.max(0, deadline - Date.now()))));
        delayMs = Math.min(delayMs * 2, 1000);
      }
      if (queue.length > 0) {
        options.onDrop?.(queue.length);
        queue = [];
      }
    },
    get pending() {
      return queue.length + inFlight;
    },
  };
}
