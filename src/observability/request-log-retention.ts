import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { Database } from '../db/schema.js';
import { acquireLease } from '../db/sql-lease.js';
import { timeOrderedIdFloor } from '../lib/ids.js';

const DAY_MS = 86_400_000;
const LEASE = 'request-log-retention';

export interface RequestLogRetentionOptions {
  db: Kysely<Database>;
  /** Request- and guardrail-log rows older than this many days are deleted; 0 keeps them forever. */
  retentionDays: number;
  /** Several instances share the work through a lease: one prunes at a time. */
  instanceId: string;
  /** Time between rounds (default one hour); the first round runs a minute after start. */
  intervalMs?: number;
  firstRoundDelayMs?: number;
  /** Rows per DELETE (default 500): on the embedded file each one holds the event loop for its length. */
  batchRows?: number;
  /** Pause between two DELETEs (default 20 ms), so requests and the batched appends go first. */
  pauseMs?: number;
  now?: () => number;
  onPruned?(rows: number): void;
  onError?(error: unknown): void;
}

export interface RequestLogRetention {
  /** One round: deletes every row older than the retention (both logs), batch by batch; returns how many. */
  pruneOnce(): Promise<number>;
  /** Stops the timer, and a round under way after its current batch. */
  stop(): Promise<void>;
}

/**
 * Keeps the request log, and the guardrail log beside it, to `retentionDays`: without it the
 * embedded file grows by ~0.8 KB a call for ever (1.1 GB after 1.4 million calls), and every index
 * the batched appends write to grows with it. Request-log rows are found through the primary key,
 * which is time-ordered (lib/ids.ts): a round walks the oldest ids and deletes them a few hundred
 * at a time, with a pause between batches, so it never holds the embedded database's event loop
 * for long. `created_at` is checked as well, so a row whose id is not time-ordered (written by an
 * older version) is never deleted early. Guardrail-log rows are found org by org through their
 * (org, time) index, which also finds rows an older version wrote with random ids.
 * The spend ledger and its daily rollup are billing records and are never pruned.
 */
export function startRequestLogRetention(options: RequestLogRetentionOptions): RequestLogRetention {
  const { db } = options;
  const now = options.now ?? Date.now;
  const batchRows = options.batchRows ?? 500;
  const pauseMs = options.pauseMs ?? 20;
  const intervalMs = options.intervalMs ?? 3_600_000;
  let stopping = false;
  let running: Promise<number> | undefined;

  /** Deletes the ids `oldest` selects, `batchRows` at a time, until a batch comes back short. */
  async function deleteInBatches(table: 'request_log' | 'guardrail_logs', oldest: (limit: number) => SelectQueryBuilder<Database, typeof table, { id: string }>): Promise<number> {
    let total = 0;
    while (!stopping) {
      const result = await db.deleteFrom(table).where('id', 'in', oldest(batchRows)).executeTakeFirst();
      const deleted = Number(result.numDeletedRows);
      total += deleted;
      if (deleted < batchRows) break;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
    return total;
  }

  async function pruneRound(): Promise<number> {
    if (options.retentionDays <= 0) return 0;
    const time = now();
    // The lease outlives a round's usual length; a holder that dies hands it on when it expires.
    if (!(await acquireLease(db, LEASE, options.instanceId, 10 * 60_000, time))) return 0;
    const cutoffMs = time - options.retentionDays * DAY_MS;
    const cutoffId = timeOrderedIdFloor(cutoffMs);
    let total = await deleteInBatches('request_log', (limit) =>
      db.selectFrom('request_log').select('id').where('id', '<', cutoffId).where('created_at', '<', cutoffMs).orderBy('id').limit(limit),
    );
    const orgs = await db.selectFrom('orgs').select('id').execute();
    for (const org of orgs) {
      if (stopping) break;
      total += await deleteInBatches('guardrail_logs', (limit) =>
        db.selectFrom('guardrail_logs').select('id').where('org_id', '=', org.id).where('created_at', '<', cutoffMs).limit(limit),
      );
    }
    if (total > 0) options.onPruned?.(total);
    return total;
  }

  const pruneOnce = (): Promise<number> => {
    running ??= pruneRound().finally(() => {
      running = undefined;
    });
    return running;
  };
  const round = () => {
    pruneOnce().catch((error: unknown) => options.onError?.(error));
  };
  let interval: NodeJS.Timeout | undefined;
  const first = setTimeout(() => {
    round();
    interval = setInterval(round, intervalMs);
    interval.unref();
  }, options.firstRoundDelayMs ?? 60_000);
  first.unref();

  return {
    pruneOnce,
    async stop() {
      stopping = true;
      clearTimeout(first);
      clearInterval(interval);
      await running?.catch(() => {});
    },
  };
}
