import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * A named lease in the `leases` table: background work (video polling, threshold checks) runs on
 * exactly one instance at a time, and moves to another when its holder dies (the lease expires).
 * Acquiring is one conditional UPDATE (or an INSERT when the row is new), atomic on SQLite and Postgres.
 */
export async function acquireLease(db: Kysely<Database>, name: string, holder: string, ttlMs: number, now = Date.now()): Promise<boolean> {
  const expiresAt = now + ttlMs;
  const updated = await db
    .updateTable('leases')
    .set({ holder, expires_at: expiresAt })
    .where('name', '=', name)
    .where((expression) => expression.or([expression('holder', '=', holder), expression('expires_at', '<', now)]))
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) > 0) return true;
  await db
    .insertInto('leases')
    .values({ name, holder, expires_at: expiresAt })
    .onConflict((conflict) => conflict.column('name').doNothing())
    .execute();
  // Insert results differ between dialects; reading the row back is unambiguous.
  const row = await db.selectFrom('leases').select('holder').where('name', '=', name).executeTakeFirst();
  return row?.holder === holder;
}

export async function releaseLease(db: Kysely<Database>, name: string, holder: string): Promise<void> {
  await db.deleteFrom('leases').where('name', '=', name).where('holder', '=', holder).execute();
}
