import { randomUUID } from 'node:crypto';
import type { Kysely, Migration } from 'kysely';
import type { Database } from '../db/schema.js';
import type { SpendGate } from './spend-gate.js';

/**
 * Spend counters known to miss costs the ledger has: settlements an instance could not replay
 * before it stopped (the spend store was away at shutdown) or dropped from a full replay queue.
 * The ledger (SQL) holds those costs; the shared counters (Redis) do not, and nothing else would
 * tell them. The names are kept in SQL, since the instance that lost them may never start again,
 * and any instance that can reach the store marks those counters unseeded: their next use seeds
 * them from SQL, the lost costs included (docs/money.md, "Known limits").
 */
export interface CounterRepairs {
  /** Remembers counters that miss costs (in SQL: it must outlive this process). */
  record(accountKeys: readonly string[]): Promise<void>;
  /** Marks every remembered counter for seeding again, then forgets it; returns how many. */
  apply(): Promise<number>;
}

const BATCH = 500;

export function createCounterRepairs(options: { db: Kysely<Database>; gate: Pick<SpendGate, 'unseed'>; now?: () => number }): CounterRepairs {
  const { db, gate } = options;
  const now = options.now ?? Date.now;
  return {
    async record(accountKeys) {
      const unique = [...new Set(accountKeys)];
      for (let start = 0; start < unique.length; start += BATCH) {
        const rows = unique.slice(start, start + BATCH).map((account_key) => ({ account_key, recorded_at: now(), record_id: randomUUID() }));
        // A counter already waiting is recorded again (a new record_id): an instance applying the
        // older record right now then leaves this one for its next pass, since the counter may have
        // been seeded again before this loss reached the ledger.
        await db
          .insertInto('spend_counter_repairs')
          .values(rows)
          .onConflict((conflict) =>
            conflict.column('account_key').doUpdateSet((update) => ({ recorded_at: update.ref('excluded.recorded_at'), record_id: update.ref('excluded.record_id') })),
          )
          .execute();
      }
    },
    async apply() {
      let applied = 0;
      for (;;) {
        const rows = await db.selectFrom('spend_counter_repairs').select(['account_key', 'record_id']).orderBy('recorded_at').limit(BATCH).execute();
        if (rows.length === 0) return applied;
        const keys = rows.map((row) => row.account_key);
        await gate.unseed(keys);
        // Only what was read is forgotten: a key recorded again meanwhile (a newer loss) has a new record_id and stays.
        await db.deleteFrom('spend_counter_repairs').where('record_id', 'in', rows.map((row) => row.record_id)).execute();
        applied += rows.length;
        if (rows.length < BATCH) return applied;
      }
    },
  };
}

export const counterRepairMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('spend_counter_repairs')
      .addColumn('account_key', 'text', (column) => column.primaryKey())
      .addColumn('recorded_at', 'bigint', (column) => column.notNull())
      .addColumn('record_id', 'text', (column) => column.notNull())
      .execute();
  },
};
