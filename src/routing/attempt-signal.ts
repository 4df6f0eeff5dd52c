import type { Timeouts } from '../providers/provider.js';
import { CallAbort, type CallSignal } from '../lib/call-signal.js';
import { startDeadline, type Deadline } from '../lib/deadline-ticker.js';
import type { AttemptTimeout } from './attempt-error.js';

export interface AttemptSignal {
  /** Aborts when the client's signal does, or when a timer below fires. */
  readonly signal: CallSignal;
  /** Which timer fired, if one did. */
  timedOut(): AttemptTimeout | null;
  /** The first stream event arrived: stop the first-byte timer. */
  firstByteArrived(): void;
  /** Clears the timers; call when the attempt is over. */
  dispose(): void;
}

/**
 * The signal of one attempt: the client's signal combined with the deployment's first-byte and
 * total timers. The connect timeout is the transport's to enforce (it sees the socket); it gets
 * it through the target's timeouts, capped like these.
 */
export function createAttemptSignal(parent: CallSignal, timeouts: Timeouts, watchFirstByte: boolean): AttemptSignal {
  return new TimedAttemptSignal(parent, timeouts, watchFirstByte);
}

/**
 * A class rather than an object of closures: an attempt is made for every call, and its methods
 * then live on the prototype instead of being made anew each time.
 */
class TimedAttemptSignal implements AttemptSignal {
  private readonly controller = new CallAbort();
  private fired: AttemptTimeout | null = null;
  private firstByteTimer: Deadline | undefined;
  private readonly totalTimer: Deadline;
  private readonly onParentAbort = () => this.controller.abort(this.parent.reason);

  constructor(
    private readonly parent: CallSignal,
    timeouts: Timeouts,
    watchFirstByte: boolean,
  ) {
    if (parent.aborted) this.controller.abort(parent.reason);
    else parent.addEventListener('abort', this.onParentAbort, { once: true });
    // Without a stream the router sees no first byte (the body arrives whole); the transport then
    // enforces firstByteMs on the response headers.
    // Deadlines, not Node timers: the total's duration is new on every call (lib/deadline-ticker.ts).
    this.firstByteTimer = watchFirstByte ? startDeadline(timeouts.firstByteMs, () => this.fire('first_byte')) : undefined;
    this.totalTimer = startDeadline(timeouts.totalMs, () => this.fire('total'));
  }

  get signal(): CallSignal {
    return this.controller.signal;
  }

  timedOut(): AttemptTimeout | null {
    return this.fired;
  }

  firstByteArrived(): void {
    this.firstByteTimer?.cancel();
    this.firstByteTimer = undefined;
    // From here the stream belongs to its consumer, whose socket keeps the process alive; a
    // stream nobody consumes must not hold the process open until the total timer fires.
    this.totalTimer.unref();
  }

  dispose(): void {
    this.firstByteTimer?.cancel();
    this.totalTimer.cancel();
    this.parent.removeEventListener('abort', this.onParentAbort);
  }

  private fire(which: AttemptTimeout): void {
    if (this.fired || this.controller.signal.aborted) return;
    this.fired = which;
    this.controller.abort(new Error(`attempt ${which} timeout`));
  }
}

/** Caps each timeout by the time the request has left. */
export function capTimeouts(timeouts: Timeouts, remainingMs: number): Timeouts {
  const remaining = Math.max(1, Math.floor(remainingMs));
  return {
    connectMs: Math.min(timeouts.connectMs, remaining),
    firstByteMs: Math.min(timeouts.firstByteMs, remaining),
    totalMs: Math.min(timeouts.totalMs, remaining),
  };
}

/** Settles like `promise`, or rejects as soon as `signal` aborts (for providers that ignore the signal). */
export function untilAborted<T>(promise: Promise<T>, signal: CallSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
