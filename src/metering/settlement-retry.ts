import type { ThresholdContext } from './budget-thresholds.js';
import type { SettledAccount, SpendAccount, SpendGate } from './spend-gate.js';

/** A deferred settlement: what the gate needs, and what its threshold events name (the call). */
export interface DeferredSettlement {
  kind: 'settle';
  reservationId: string;
  accounts: readonly SpendAccount[];
  actualNanos: number;
  context?: ThresholdContext;
}

/** A gate write that failed while the store was away, to be replayed when it is back. */
export type DeferredGateWrite = DeferredSettlement | { kind: 'release'; reservationId: string };

export interface SettlementRetry {
  defer(write: DeferredGateWrite): void;
  /** Replays what is queued now; stops at the first failure (the store is still away). */
  replay(): Promise<void>;
  readonly pending: number;
  /** Stops the timer after one last replay; what still fails is handed to `onLost`. */
  close(): Promise<void>;
}

export interface SettlementRetryOptions {
  gate: SpendGate;
  intervalMs?: number;
  /** Past this many queued writes the oldest are dropped (and reported). */
  maxPending?: number;
  onError?: (error: unknown, context: string) => void;
  /**
   * A replayed settlement landed: the spent totals it answered, for the budget threshold check
   * (a crossing made by a replay fires as one made by the first try would have).
   */
  onSettled?: (write: DeferredSettlement, settled: SettledAccount[]) => void;
  /**
   * Settlements given up (not replayed by close, or dropped from a full queue): their counters miss
   * costs the ledger has. Told so they can be seeded again once the store is back (counter-repairs.ts).
   */
  onLost?: (lost: DeferredSettlement[]) => Promise<void>;
}

/**
 * When the spend store (Redis) is away, a call that already ran cannot settle: its cost is in the
 * ledger (SQL), but the shared counter would miss it and its hold would linger until the sweeper.
 * This queue replays those writes once the store is back. A replayed settlement applies only while
 * the hold still exists (`onlyIfHeld`): a settlement whose reply was lost but which did land, or a
 * counter that was re-seeded from the ledger after Redis lost its data, is not counted twice.
 * Releases are idempotent. An outage shorter than the reservation TTL loses nothing; past that the
 * sweeper has released the hold, the replay is skipped and the counter stays short of the ledger
 * (docs/deployment.md, "Failure of Redis or Postgres").
 */
export function createSettlementRetry(options: SettlementRetryOptions): SettlementRetry {
  const { gate } = options;
  const maxPending = options.maxPending ?? 100_000;
  const report = options.onError ?? (() => {});
  let queue: DeferredGateWrite[] = [];
  let running: Promise<void> | undefined;

  /** Hands given-up settlements on; until that lands they are reported as lost from the counters. */
  async function giveUp(writes: readonly DeferredGateWrite[], why: string): Promise<void> {
    const settlements = writes.filter((write): write is DeferredSettlement => write.kind === 'settle');
    if (settlements.length === 0) return;
    try {
      if (!options.onLost) throw new Error('nothing repairs counters here');
      await options.onLost(settlements);
      report(new Error(`${settlements.length} settlement(s) ${why}; their counters will be seeded again from the ledger`), 'spend counters marked for repair');
    } catch (error) {
      report(error, `${settlements.length} settlement(s) ${why}: spend counters short of the ledger`);
    }
  }

  async function apply(write: DeferredGateWrite): Promise<void> {
    if (write.kind === 'release') return gate.release(write.reservationId);
    const settled = await gate.settle(write.reservationId, write.accounts, write.actualNanos, { onlyIfHeld: true });
    if (settled.length > 0) options.onSettled?.(write, settled);
  }

  async function drain(): Promise<void> {
    while (queue.length > 0) {
      const write = queue[0];
      try {
        await apply(write);
      } catch (error) {
        report(error, `spend store still unavailable; ${queue.length} settlement(s) wait`);
        return;
      }
      // Only drop it if it is still at the front (a drop for overflow may have shifted the queue).
      if (queue[0] === write) queue.shift();
    }
  }

  function replay(): Promise<void> {
    if (!running) running = drain().finally(() => (running = undefined));
    return running;
  }

  const timer = setInterval(() => {
    if (queue.length > 0) void replay();
  }, options.intervalMs ?? 1000);
  timer.unref();

  return {
    defer(write) {
      queue.push(write);
      if (queue.length > maxPending) {
        const dropped = queue.slice(0, queue.length - maxPending);
        queue = queue.slice(dropped.length);
        report(new Error(`${dropped.length} deferred settlement(s) dropped`), 'settlement queue full');
        void giveUp(dropped, 'dropped from a full queue');
      }
    },
    replay,
    get pending() {
      return queue.length;
    },
    async close() {
      clearInterval(timer);
      await replay();
      const left = queue;
      queue = [];
      await giveUp(left, 'not replayed before shutdown');
    },
  };
}
