/**
 * Wraps an async iterable so an observer sees every item, the end, and any failure, without
 * buffering. `onEnd` runs once whether the stream finished, failed or the consumer stopped early
 * (`completed` tells which).
 */
export interface StreamObserver<T> {
  onItem?(item: T): T | undefined | void;
  onEnd?(outcome: { completed: boolean; error?: unknown }): void | Promise<void>;
}

/**
 * A plain iterator rather than an async generator: every layer a stream passes through costs per
 * event, and a generator's resume, await and yield cost three promises and ~500 bytes an event
 * where one `then` does. It behaves as the generator did: one `next()` at a time (as `for await`
 * calls it), `onEnd` awaited before the last step resolves, the source closed before `onEnd` when
 * the consumer stops early, and nothing read nor reported if it stops before the first item.
 */
export function tapStream<T>(source: AsyncIterable<T>, observer: StreamObserver<T>): AsyncIterableIterator<T> {
  let iterator: AsyncIterator<T> | undefined;
  let finished = false;
  const done = (): IteratorReturnResult<undefined> => ({ done: true, value: undefined });

  async function complete(): Promise<IteratorReturnResult<undefined>> {
    finished = true;
    await observer.onEnd?.({ completed: true, error: undefined });
    return done();
  }

  async function fail(error: unknown): Promise<never> {
    finished = true;
    await observer.onEnd?.({ completed: false, error });
    throw error;
  }

  /** Stopped before the source ended (an observer threw, or the consumer left): close it, then report. */
  async function stopEarly(error: unknown): Promise<void> {
    finished = true;
    try {
      await iterator?.return?.();
    } finally {
      await observer.onEnd?.({ completed: false, error });
    }
  }

  const tapped: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]() {
      return tapped;
    },
    next(): Promise<IteratorResult<T>> {
      if (finished) return Promise.resolve(done());
      iterator ??= source[Symbol.asyncIterator]();
      return iterator.next().then(
        (step): IteratorResult<T> | Promise<IteratorResult<T>> => {
          if (step.done) return complete();
          let replaced: T | undefined | void;
          try {
            replaced = observer.onItem?.(step.value);
          } catch (error) {
            return stopEarly(error).then(() => Promise.reject(error));
          }
          return replaced === undefined ? step : { done: false, value: replaced };
        },
        fail,
      );
    },
    async return(value?: unknown): Promise<IteratorResult<T>> {
      if (finished || iterator === undefined) {
        finished = true;
        return { done: true, value: value as T };
      }
      await stopEarly(undefined);
      return { done: true, value: value as T };
    },
  };
  return tapped;
}
