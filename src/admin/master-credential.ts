import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { randomBase62 } from '../lib/ids.js';
import { constantTimeEqual, hashVirtualKey } from '../keys/virtual-key-format.js';

const SETTING = 'master_key_hash';
export const MASTER_KEY_PREFIX = 'gw-master-';

export interface MasterCredential {
  verify(token: string): boolean;
}

/**
 * The master credential authorizes the admin API. With GW_MASTER_KEY set it is that value; otherwise
 * one is generated on first start, printed once, and only its keyed hash is stored.
 */
export async function loadMasterCredential(
  db: Kysely<Database>,
  hashKey: Buffer,
  configured: string | undefined,
): Promise<{ credential: MasterCredential; generated: string | undefined }> {
  if (configured) {
    const expected = hashVirtualKey(configured, hashKey);
    return { credential: { verify: (token) => constantTimeEqual(hashVirtualKey(token, hashKey), expected) }, generated: undefined };
  }
  const row = await db.selectFrom('gw_settings').select('value').where('name', '=', SETTING).executeTakeFirst();
  let generated: string | undefined;
  let storedHash = row?.value;
  if (!storedHash) {
    generated = MASTER_KEY_PREFIX + randomBase62(40);
    storedHash = hashVirtualKey(generated, hashKey);
    // Another instance may win the race on first start; then its credential is the one.
    await db
      .insertInto('gw_settings')
      .values({ name: SETTING, value: storedHash })
      .onConflict((conflict) => conflict.column('name').doNothing())
      .execute();
    const winner = await db.selectFrom('gw_settings').select('value').where('name', '=', SETTING).executeTakeFirstOrThrow();
    if (winner.value !== storedHash) {
      generated = undefined;
      storedHash = winner.value;
    }
  }
  const expected = storedHash;
  return { credential: { verify: (token) => constantTimeEqual(hashVirtualKey(token, hashKey), expected) }, generated };
}
