import type { Command, Redis } from 'ioredis';
import type { CommandArgument } from './redis-encoded-command.js';
import { sendScriptBatch, type BatchableScript, type PendingScript } from './redis-script-batch.js';

export interface TurnWriteOptions {
  /**
   * How long commands issued through `sendUnhurried` may wait for company (default 5 ms). The
   * next command that cannot wait takes them along in its write; otherwise a timer sends them.
   */
  unhurriedWindowMs?: number;
}

interface Coalescer {
  unhurriedDepth: number;
  queueScript(entry: PendingScript): void;
}

const coalescers = new WeakMap<Redis, Coalescer>();

/**
 * Sends the commands that one turn of the event loop issues on a Redis connection in one write.
 *
 * A call in Postgres + Redis mode issues its commands a few microseconds apart: the key's change
 * version, the rate-limit script and the credit hold before the upstream call; the settlement and
 * the token correction after it. Written one by one, each write to a Redis that has gone idle
 * costs a wake-up in the kernel, charged to gw's own thread: profiled at 500 req/s, these writes
 * took 30–60 µs each, and the settlement's sat between the upstream's answer and the client's.
 *
 * The connection is corked at the turn's first command and uncorked once the turn's promise chain
 * has run to its first wait for I/O (a microtask schedules the uncork as a next-tick callback, and
 * Node runs those only after the microtask queue is empty). So the commands before the upstream
 * call leave together. Nothing urgent waits for a later turn: ioredis's own auto-pipelining defers
 * to setImmediate, behind every other ready socket, which was measured to double the p99 at 500
 * req/s.
 *
 * Under load, several calls' turns run in one pass of the event loop (its timers, then one ready
 * socket after another). Only the first of them writes at the end of its turn; the turns after it
 * in the same pass leave their commands corked until the pass is over (setImmediate runs right
 * after the poll phase) and go out in one write. At 500 req/s a pass rarely holds more than one
 * call, so nothing changes there; at saturation (32 connections, Postgres + Redis) the gateway's
 * CPU per call fell from ~400 to ~330 µs and its throughput rose ~1.2×, measured with wrk as in
 * bench/, alternating builds. Deferring every write to the end of the pass instead (what
 * ioredis's auto-pipelining does) saved a little more CPU but also delayed the lone call's write
 * behind every other ready socket.
 *
 * Commands that nobody's answer waits for (the settlement, the token correction, a release) are
 * issued through `sendUnhurried`: they stay corked until the next urgent command's write, which
 * they join, or until `unhurriedWindowMs` has passed. Under steady traffic that is the next call's
 * admission write a moment later, so a call costs one write to Redis instead of two.
 *
 * Lua scripts (lib/redis-script.ts) go one step further: instead of one EVALSHA each, the scripts
 * that leave in one write are sent as one composite script (lib/redis-script-batch.ts), so a call's
 * five scripts reach Redis as one command. They wait in a queue of their own until the write, and
 * a plain command issued meanwhile sends them first: Redis still runs everything in the order it
 * was issued.
 */
export function coalesceTurnWrites(redis: Redis, options: TurnWriteOptions = {}): void {
  const windowMs = options.unhurriedWindowMs ?? 5;
  const send = redis.sendCommand.bind(redis);
  let corked: Redis['stream'] | undefined;
  let uncorkScheduled = false;
  let windowTimer: NodeJS.Timeout | undefined;
  // Set once a turn of this event-loop pass has written (or will at its end); cleared right after the pass.
  let passHasWritten = false;
  let queuedScripts: PendingScript[] = [];
  const passEnded = () => {
    passHasWritten = false;
  };
  /** Into the corked stream, with no scheduling of its own: for what is already scheduled. */
  const write = (command: Command): Promise<unknown> => {
    if (corked === undefined && redis.status === 'ready') {
      corked = redis.stream;
      corked.cork();
    }
    return send(command) as Promise<unknown>;
  };
  const sendQueuedScripts = () => {
    if (queuedScripts.length === 0) return;
    const batch = queuedScripts;
    queuedScripts = [];
    sendScriptBatch(redis, batch, write);
  };
  const uncork = () => {
    sendQueuedScripts();
    const stream = corked;
    corked = undefined;
    uncorkScheduled = false;
    stream?.uncork();
  };
  const uncorkAfterThisTurn = () => process.nextTick(uncork);
  const windowEnded = () => {
    windowTimer = undefined;
    // A timer callback is a turn of its own: whatever is corked now is unhurried only.
    uncork();
  };
  /** Arranges for what the current turn issues to be written: at the turn's end, or within the window if it is unhurried. */
  const schedule = () => {
    if (coalescer.unhurriedDepth === 0) {
      if (!uncorkScheduled) {
        uncorkScheduled = true;
        if (passHasWritten) {
          // Queued after passEnded, so the pass's flag is cleared before this write leaves.
          setImmediate(uncork);
        } else {
          passHasWritten = true;
          setImmediate(passEnded);
          queueMicrotask(uncorkAfterThisTurn);
        }
      }
    } else if (!uncorkScheduled && windowTimer === undefined) {
      // One timer per window, never cleared: firing after an urgent write already took the batch
      // finds nothing corked, which is cheaper than clearing and re-arming it on every call.
      windowTimer = setTimeout(windowEnded, windowMs);
      windowTimer.unref();
    }
  };
  const coalescer: Coalescer = {
    unhurriedDepth: 0,
    queueScript(entry) {
      queuedScripts.push(entry);
      schedule();
    },
  };
  coalescers.set(redis, coalescer);
  redis.sendCommand = (command, stream) => {
    if (stream !== undefined || redis.status !== 'ready') return send(command, stream);
    // Scripts issued before this command run before it, as they were issued.
    sendQueuedScripts();
    schedule();
    return write(command) as ReturnType<Redis['sendCommand']>;
  };
}

/**
 * Runs a script as part of the turn's write (see coalesceTurnWrites), or answers undefined when
 * the connection does not coalesce or is not ready (the script is then sent on its own, and
 * ioredis queues or refuses it as it does any command).
 */
export function queueScript(
  redis: Redis,
  script: BatchableScript,
  keys: readonly string[],
  args: readonly CommandArgument[],
): Promise<unknown> | undefined {
  const coalescer = coalescers.get(redis);
  if (coalescer === undefined || redis.status !== 'ready') return undefined;
  return new Promise((resolve, reject) => coalescer.queueScript({ script, keys, args, resolve, reject }));
}

/**
 * Issues the commands `issue` sends on `redis` as unhurried (see coalesceTurnWrites): they reach
 * Redis within the connection's window, in order with every other command of the connection. On a
 * connection without coalescing they are sent as usual. The promise is `issue`'s.
 */
export function sendUnhurried<T>(redis: Redis, issue: () => T): T {
  const coalescer = coalescers.get(redis);
  if (!coalescer) return issue();
  coalescer.unhurriedDepth++;
  try {
    return issue();
  } finally {
    coalescer.unhurriedDepth--;
  }
}
