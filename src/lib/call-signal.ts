/**
 * What gw's stages, router and providers use of a cancellation signal: the part of the DOM
 * `AbortSignal` they call. A Node `AbortSignal` satisfies it, and so does `CallAbort` below; undici
 * accepts either (it looks for `addEventListener`).
 */
export interface CallSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * A signal and the means to abort it, in one small object: the per-call replacement for
 * `AbortController`. Every call made two or three of those (the client's, the attempt's, and the
 * meter's for a stream). Node 20 builds each `AbortSignal` as an `EventTarget` and then swaps its
 * prototype, which cost ~3% of the gateway's CPU at saturation and was the largest thing a call
 * left for the old generation (~1.4 KB). This one is a plain object with an array of listeners.
 *
 * Semantics kept from `AbortSignal`: abort happens once, with the first reason; listeners run in
 * the order they were added, each at most once; a listener added after the abort never runs
 * (callers check `aborted` first, as they must with `AbortSignal` too). A listener that throws
 * does not stop the others; the first error is rethrown once all have run.
 */
export class CallAbort implements CallSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined = undefined;

  /** This object itself, as the read-only side to hand to others. */
  get signal(): CallSignal {
    return this;
  }

  addEventListener(type: 'abort', listener: () => void): void {
    if (type !== 'abort' || this.aborted) return;
    if (this.listeners === undefined) this.listeners = [listener];
    else this.listeners.push(listener);
  }

  removeEventListener(type: 'abort', listener: () => void): void {
    const listeners = this.listeners;
    if (type !== 'abort' || listeners === undefined) return;
    const index = listeners.indexOf(listener);
    if (index >= 0) listeners.splice(index, 1);
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners === undefined) return;
    let failure: { error: unknown } | undefined;
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }
}
