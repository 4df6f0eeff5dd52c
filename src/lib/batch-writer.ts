/**
 * Collects items in memory and writes them in batches off the hot path: every `intervalMs`, or
 * sooner when `maxBatch` items wait. `add` never waits on I/O. A failed write is retried on the next
 * tick (items stay queued, up to `maxQueued`; past that the oldest are dropped and reported), so a
 * short database outage loses nothing. `close()` flushes what is left; a crash loses at most one
 * interval's worth.
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
  onError?(error: unknown, items: number): void;
  onDrop?(dropped: number): void;
}

export function createBatchWriter<T>(options: BatchWriterOptions<T>): BatchWriter<T> {
  const maxQueued = options.maxQueued ?? 100_000;
  let queue: T[] = [];
  let writing: Promise<void> | undefined;
  let closed = false;
  const timer = setInterval(() => void flush(), options.intervalMs);
  timer.unref();

  async function writeOnce(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.slice(0, options.maxBatch);
      try {
        await options.write(batch);
      } catch (error) {
        options.onError?.(error, batch.length);
        return;
      }
      queue = queue.slice(batch.length);
    }
  }

  function flush(): Promise<void> {
    if (writing) return writing;
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
      if (queue.length > maxQueued) {
        const dropped = queue.length - maxQueued;
        queue = queue.slice(dropped);
        options.onDrop?.(dropped);
      }
      if (queue.length >= options.maxBatch) void flush();
    },
    flush,
    async close() {
      closed = true;
      clearInterval(timer);
      // Keep trying briefly: a close during a database blip should still land the last batch.
      for (let attempt = 0; attempt < 3 && queue.length > 0; attempt++) {
        await flush();
        if (queue.length > 0) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      await writing;
    },
    get pending() {
      return queue.length;
    },
  };
}
