/**
 * A value a store may give at once or later. In-memory stores (and a shared store answering from
 * what it holds locally) give it at once, so the call path spends no promise, and no microtask
 * turn, on bookkeeping that finished synchronously; callers await only what is a promise.
 */
export type Awaitable<T> = T | Promise<T>;

export function isPromise<T>(value: Awaitable<T>): value is Promise<T> {
  return value instanceof Promise;
}

/** Hands a rejection of `value` to `report`; a value given at once has none. */
export function reportRejection(value: Awaitable<unknown>, report: (error: unknown) => void): void {
  if (isPromise(value)) value.catch(report);
}
