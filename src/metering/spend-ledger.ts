import type { BulkInsert } from '../db/bulk-insert.js';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.js';
import { createBatchWriter, type BatchWriter } from '../lib/batch-writer.js';
import { newTimeOrderedId } from '../lib/ids.js';
import type { Usage } from '../protocol/usage.js';
import { DAY_MS } from './spend-periods.js';

/** One metered call, as appended to spend_ledger. */
export interface SpendEntry {
  requestId: string;
  orgId: string;
  keyId: string;
  keyAlias: string;
  teamId: string | null;
  user: string | null;
  model: string;
  operation: string;
  /**
   * What was billed: the usage classes, plus `estimated: true` when the upstream reported none (or
   * the cost was charged at the hold), and `overHoldNanos` when the cost exceeded the call's hold.
   */
  units: Usage & { estimated?: boolean; cache?: 'hit'; overHoldNanos?: number };
  costNanos: number;
  unpriced: boolean;
  createdAt: number;
}

/** Which spend to add up: an org, a team, a key, or one `user` value within a key. */
export type SpendScope = { orgId: string } | { teamId: string } | { keyId: string; user?: string };

/**
 * The append-only spend ledger. `record` never waits on the database: entries are written in
 * batches (lib/batch-writer.ts). Reads flush first, so an entry is visible to the caller that made it.
 */
export interface SpendLedger {
  record(entry: SpendEntry): void;
  history(orgId: string, page: { limit: number; offset: number }): Promise<SpendEntry[]>;
  /** Sum of cost_nanos in a scope since a time (inclusive), for seeding the spend counters. */
  spentSince(scope: SpendScope, sinceMs: number): Promise<number>;
  /** Sum of credit transactions (top-ups and adjustments) of an org. */
  creditedTotal(orgId: string): Promise<number>;
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface SqlSpendLedgerOptions {
  db: Kysely<Database>;
  /** Batched appends (off the event loop for SQLite); plain Kysely inserts when absent. */
  bulkInsert?: BulkInsert;
  intervalMs?: number;
  batchSize?: number;
  onError?: (error: unknown) => void;
}

export function createSqlSpendLedger(options: SqlSpendLedgerOptions): SpendLedger {
  const { db } = options;
  const writer: BatchWriter<SpendEntry> = createBatchWriter({
    intervalMs: options.intervalMs ?? 1000,
    maxBatch: options.batchSize ?? 500,
    onError: (error) => options.onError?.(error),
    async write(entries) {
      const rows = entries.map((entry) => ({
            id: newTimeOrderedId(),
            request_id: entry.requestId,
            org_id: entry.orgId,
            key_id: entry.keyId,
            key_alias: entry.keyAlias,
            team_id: entry.teamId,
            user: entry.user,
            model: entry.model,
            operation: entry.operation,
            units: JSON.stringify(entry.units),
            cost_nanos: entry.costNanos,
            unpriced: entry.unpriced ? 1 : 0,
            created_at: entry.createdAt,
          }));
      // A retried batch after a partial failure must not be rejected whole by the unique request id.
      if (options.bulkInsert) await options.bulkInsert('spend_ledger', rows, { ignoreConflicts: true });
      else await db.insertInto('spend_ledger').values(rows).onConflict((conflict) => conflict.column('request_id').doNothing()).execute();
    },
  });

  return {
    record(entry) {
      writer.add(entry);
    },
    async history(orgId, page) {
      await writer.flush();
      const rows = await db
        .selectFrom('spend_ledger')
        .selectAll()
        .where('org_id', '=', orgId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(page.limit)
        .offset(page.offset)
        .execute();
      return rows.map((row) => ({
        requestId: row.request_id,
        orgId: row.org_id,
        keyId: row.key_id,
        keyAlias: row.key_alias,
        teamId: row.team_id,
        user: row.user,
        model: row.model,
        operation: row.operation,
        units: JSON.parse(row.units) as SpendEntry['units'],
        costNanos: Number(row.cost_nanos),
        unpriced: Number(row.unpriced) === 1,
        createdAt: Number(row.created_at),
      }));
    },
    async spentSince(scope, sinceMs) {
      // Every seeding asks from a day boundary (0, or a budget period's start): the daily rollup
      // answers in a few rows a day. Any other time is summed from the ledger itself.
      const row = await (sinceMs % DAY_MS === 0 ? spentFromRollup(db, scope, sinceMs) : spentFromLedger(db, scope, sinceMs));
      return Number(row?.total ?? 0);
    },
    async creditedTotal(orgId) {
      const row = await db
        .selectFrom('credit_transactions')
        .select(sql<number | string | null>`coalesce(sum(amount_nanos), 0)`.as('total'))
        .where('org_id', '=', orgId)
        .executeTakeFirst();
      return Number(row?.total ?? 0);
    },
    flush: () => writer.flush(),
    close: () => writer.close(),
  };
}

type SpendTotal = { total: number | string | null } | undefined;

function spentFromRollup(db: Kysely<Database>, scope: SpendScope, sinceMs: number): Promise<SpendTotal> {
  const [kind, ownerId, user] =
    'orgId' in scope
      ? ['org', scope.orgId, '']
      : 'teamId' in scope
        ? ['team', scope.teamId, '']
        : scope.user === undefined
          ? ['key', scope.keyId, '']
          : ['user', scope.keyId, scope.user];
  return db
    .selectFrom('spend_daily')
    .select(sql<number | string | null>`coalesce(sum(cost_nanos), 0)`.as('total'))
    .where('scope', '=', kind)
    .where('owner_id', '=', ownerId)
    .where('user', '=', user)
    .where('day_ms', '>=', sinceMs)
    .executeTakeFirst();
}

function spentFromLedger(db: Kysely<Database>, scope: SpendScope, sinceMs: number): Promise<SpendTotal> {
  let query = db
    .selectFrom('spend_ledger')
    .select(sql<number | string | null>`coalesce(sum(cost_nanos), 0)`.as('total'))
    .where('created_at', '>=', sinceMs);
  if ('orgId' in scope) query = query.where('org_id', '=', scope.orgId);
  else if ('teamId' in scope) query = query.where('team_id', '=', scope.teamId);
  else {
    query = query.where('key_id', '=', scope.keyId);
    if (scope.user !== undefined) query = query.where('user', '=', scope.user);
  }
  return query.executeTakeFirst();
}
