/**
 * Keeps the event loop polling its sockets, instead of sleeping in the kernel, while an answer is
 * due within a short window: the upstream client (providers/http/http1-client.ts) tells it when it
 * has sent a request to an origin that usually answers within `windowMs`, and when the answer's
 * head arrived.
 *
 * Why: a thread asleep in epoll_wait is woken by the kernel when the answer's bytes land, and on a
 * CPU left idle that wake-up (on a virtual machine, the hypervisor resuming a halted vCPU) costs
 * tens of µs, paid twice a call by any proxy: once for the request, once for the upstream's
 * answer. A loop kept turning with `setImmediate` polls with a zero timeout, so it is running when
 * the answer lands and reads it on its next turn. It costs the CPU time of the wait, at most
 * `windowMs` per request and only for origins whose recent answers came within the window: a
 * model provider that takes hundreds of milliseconds is never polled for. docs/pipeline.md,
 * "Polling for answers due at once", has the measurement.
 *
 * One poller serves one event loop, and polls only while a single polled request awaits its
 * answer: with two or more in flight the loop has other work arriving anyway, and under load a
 * loop kept turning reads fewer ready sockets per turn than one that waits for them (measured: 13%
 * more CPU per request at saturation, at the median, when it polled for every request). A `setImmediate` chain
 * runs while that one request is unanswered and its window open, and stops at the first turn
 * where either is no longer so.
 */
export interface AnswerWaitPoller {
  /**
   * A request was sent to an origin with these answer times: counted, and polled for if it is due
   * soon and the only one awaiting its answer. Returns whether it was counted (then `settled` must follow).
   */
  sent(times: AnswerTimes, at: number): boolean;
  /** The answer of a polled request arrived, or its exchange ended without one. */
  settled(): void;
  /** Whether a polling chain is running (for tests). */
  readonly polling: boolean;
}

/** What an origin's recent answers took, from the request's write to the answer's head. */
export class AnswerTimes {
  /** Smoothed answer time in ms (an exponential moving average over about the last 8); undefined before the first answer. */
  typicalMs: number | undefined = undefined;

  record(elapsedMs: number): void {
    this.typicalMs = this.typicalMs === undefined ? elapsedMs : this.typicalMs + (elapsedMs - this.typicalMs) / 8;
  }
}

export interface AnswerWaitPollerOptions {
  /** Longest time one request's answer is polled for, in ms; 0 turns polling off. */
  windowMs: number;
  now?: () => number;
  /** Runs `turn` on the loop's next check phase (tests pass their own). */
  schedule?: (turn: () => void) => void;
}

export function createAnswerWaitPoller(options: AnswerWaitPollerOptions): AnswerWaitPoller {
  const { windowMs } = options;
  const now = options.now ?? (() => performance.now());
  const schedule = options.schedule ?? ((turn: () => void) => void setImmediate(turn));
  let unanswered = 0;
  let pollUntil = 0;
  let polling = false;

  const start = (): void => {
    if (polling) return;
    polling = true;
    schedule(turn);
  };
  const turn = (): void => {
    if (unanswered === 1 && now() < pollUntil) schedule(turn);
    else polling = false;
  };

  return {
    sent(times, at) {
      // An origin never answered yet is polled for once: its first answer tells how long it takes.
      if (windowMs <= 0 || (times.typicalMs !== undefined && times.typicalMs >= windowMs)) return false;
      unanswered++;
      pollUntil = at + windowMs;
      if (unanswered === 1) start();
      return true;
    },
    settled() {
      if (unanswered === 0) return;
      unanswered--;
      // The one left awaiting its answer is polled for again, within the latest request's window.
      if (unanswered === 1 && now() < pollUntil) start();
    },
    get polling() {
      return polling;
    },
  };
}

/** The poller that never polls, for clients made without one. */
export const NO_ANSWER_WAIT_POLLING: AnswerWaitPoller = createAnswerWaitPoller({ windowMs: 0 });
