import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { createDatabase } from './create-database.js';

test('an embedded file gets the page cache it was configured with (the driver default is 16 MiB)', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'gw-cache-'));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  for (const [options, expected] of [[{}, -2048], [{ sqliteCacheKib: 512 }, -512]] as const) {
    const handle = await createDatabase(`sqlite:${join(directory, `cache${expected}.db`)}`, { ...options, sqliteWriter: 'inline' });
    try {
      const { rows } = await sql<{ cache_size: number }>`PRAGMA cache_size`.execute(handle.db);
      assert.equal(rows[0]!.cache_size, expected);
    } finally {
      await handle.close();
    }
  }
});
