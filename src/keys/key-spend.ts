import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/**
 * Cumulative spend per virtual key (the spec's key `spend`), in nano-USD: all-time sums of the spend
 * ledger, the same source as GET /api/admin/usage/keys.
 */
export interface KeySpend {
  ofKey(keyId: string): Promise<number>;
  /** Every key's spend (of one org when given) in one grouped query; keys that never spent are absent. */
  byKey(orgId: string | undefined): Promise<Map<string, number>>;
}

/** pg returns bigint sums as strings; SQLite as numbers; a sum over no rows is null. */
const toNanos = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));

/** `flush` writes ledger entries still held in memory, so a key's spend includes the calls just made. */
export function createKeySpend(db: Kysely<Database>, options: { flush?: () => Promise<void> } = {}): KeySpend {
  return {
    async ofKey(keyId) {
      await options.flush?.();
      const row = await db
        .selectFrom('spend_ledger')
        .select((builder) => builder.fn.sum<number>('cost_nanos').as('cost_nanos'))
        .where('key_id', '=', keyId)
        .executeTakeFirst();
      return toNanos(row?.cost_nanos);
    },
    async byKey(orgId) {
      await options.flush?.();
      let query = db.selectFrom('spend_ledger').select((builder) => ['key_id', builder.fn.sum<number>('cost_nanos').as('cost_nanos')]).groupBy('key_id');
      if (orgId) query = query.where('org_id', '=', orgId);
      const rows = await query.execute();
      return new Map(rows.map((row) => [row.key_id, toNanos(row.cost_nanos)]));
    },
  };
}
