import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createDatabase } from '../db/create-database.js';
import { migrateToLatest } from '../db/migrate.js';
import { TEST_DATABASES } from '../../test/helpers/test-databases.js';
import { createSqlGuardrailStore } from './sql-guardrail-store.js';

for (const database of TEST_DATABASES) {
  describe(`guardrail store on ${database.name}`, { skip: database.skip }, () => {
    test('an org’s guardrails list in one order on every database: by name in code-unit order, then id', async () => {
      const handle = await createDatabase(await database.create());
      try {
        await migrateToLatest(handle.db);
        const store = createSqlGuardrailStore(handle.db);
        for (const name of ['b-second', 'B-first', 'a', '_under', 'é-accent']) {
          await store.create({ orgId: 'org-1', name, kind: 'pii', stage: 'pre', action: 'block', enabledByDefault: true, config: {} as never });
        }
        assert.deepEqual(
          (await store.list('org-1')).map((guardrail) => guardrail.name),
          ['B-first', '_under', 'a', 'b-second', 'é-accent'],
        );
      } finally {
        await handle.close();
      }
    });
  });
}
