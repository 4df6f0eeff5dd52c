/**
 * The promise's outcome, or a rejection with `message` once `timeoutMs` pass first. Used where a
 * shared store (Redis) must fail fast instead of holding a request: with Redis that is two or
 * three calls on every request, so it arms no timer of its own. Calls with the same `timeoutMs`
 * reach their deadlines in the order they were made, so each duration keeps one queue in that
 * order and one timer for the queue's head (the collected, re-armed `setTimeout` per call, and
 * its `Promise.race`, showed in the Postgres + Redis profile).
 */
export function withTimeout<T>(promise: Promise<T>, timeoutMs: number, message: string): Promise<T> {
  let queue = queues.get(timeoutMs);
  if (!queue) queues.set(timeoutMs, (queue = new DeadlineQueue(timeoutMs)));
  return queue.add(promise, message);
}

const queues = new Map<number, DeadlineQueue>();

/**
 * Waiters in deadline order, held in parallel arrays rather than an object each: a waiter stays
 * queued until its deadline (up to seconds), long enough for an object to be promoted to the old
 * generation; numbers in a double array and a cleared slot leave nothing behind.
 */
class DeadlineQueue {
  private deadlines: number[] = [];
  private rejects: Array<((error: Error) => void) | undefined> = [];
  private messages: string[] = [];
  /** Absolute sequence number of index 0 (waiters keep theirs across compactions). */
  private base = 0;
  private head = 0;
  /** Waiters neither answered nor rejected: the timer holds the process open only while there are some. */
  private pending = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly timeoutMs: number) {}

  add<T>(promise: Promise<T>, message: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const sequence = this.base + this.deadlines.length;
      this.deadlines.push(performance.now() + this.timeoutMs);
      this.rejects.push(reject);
      this.messages.push(message);
      this.pending += 1;
      if (this.timer === undefined) this.arm(this.timeoutMs);
      else if (this.pending === 1) this.timer.ref();
      // Answered in time: the slot is cleared and skipped when its deadline comes round. Answered
      // after the rejection: resolve/reject do nothing.
      promise.then(
        (value) => {
          this.clear(sequence);
          resolve(value);
        },
        (error: unknown) => {
          this.clear(sequence);
          reject(error);
        },
      );
    });
  }

  private clear(sequence: number): void {
    const index = sequence - this.base;
    if (index < this.head || this.rejects[index] === undefined) return;
    this.rejects[index] = undefined;
    this.pending -= 1;
    // Answered waiters still queued only wait for the timer to drop them: no reason to keep the process up.
    if (this.pending === 0) this.timer?.unref();
  }

  private arm(delayMs: number): void {
    this.timer = setTimeout(() => this.expire(), Math.max(1, Math.ceil(delayMs)));
    if (this.pending === 0) this.timer.unref();
  }

  private expire(): void {
    this.timer = undefined;
    const now = performance.now();
    const { deadlines, rejects, messages } = this;
    const length = deadlines.length;
    while (this.head < length && (deadlines[this.head]! <= now || rejects[this.head] === undefined)) {
      const reject = rejects[this.head];
      if (reject) {
        this.pending -= 1;
        reject(new Error(messages[this.head]));
      }
      rejects[this.head] = undefined;
      this.head += 1;
    }
    if (this.head === length) {
      this.base += length;
      this.deadlines = [];
      this.rejects = [];
      this.messages = [];
      this.head = 0;
      return;
    }
    if (this.head > 1024 && this.head * 2 > length) {
      this.base += this.head;
      this.deadlines = deadlines.slice(this.head);
      this.rejects = rejects.slice(this.head);
      this.messages = messages.slice(this.head);
      this.head = 0;
    }
    this.arm(this.deadlines[this.head]! - now);
  }
}
