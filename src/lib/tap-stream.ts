/**
 * Wraps an async iterable so an observer sees every item, the end, and any failure, without
 * buffering. `onEnd` runs once whether the stream finished, failed or the consumer stopped early
 * (`completed` tells which).
 */
export interface StreamObserver<T> {
  onItem?(item: T): T | undefined | void;
  onEnd?(outcome: { completed: boolean; error?: unknown }): void | Promise<void>;
}

export async function* tapStream<T>(source: AsyncIterable<T>, observer: StreamObserver<T>): AsyncGenerator<T> {
  let completed = false;
  let failure: unknown;
  try {
    for await (const item of source) {
      const replaced = observer.onItem?.(item);
      yield replaced === undefined ? item : replaced;
    }
    completed = true;
  } catch (error) {
    failure = error;
    throw error;
  } finally {
    await observer.onEnd?.({ completed, error: failure });
  }
}
