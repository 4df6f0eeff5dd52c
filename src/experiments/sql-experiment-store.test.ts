import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { createDatabase } from '../db/create-database.js';
import { migrateToLatest } from '../db/migrate.js';
import { TEST_DATABASES } from '../../test/helpers/test-databases.js';
import { createSqlExperimentStore } from './sql-experiment-store.js';

/** Fails the `nth` write to experiment_stats once, as a dropped connection would. */
function failStatsWriteOnce(nth: number): KyselyPlugin {
  let writes = 0;
  return {
    transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
      if (node.kind === 'InsertQueryNode' && ++writes === nth) throw new Error('connection lost');
      return node;
    },
    async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      return result;
    },
  };
}

const increment = (variant: string, calls: number) => ({
  experimentId: 'e1',
  variant,
  calls,
  errors: 1,
  latencyMsTotal: 10.4,
  promptTokens: 5,
  completionTokens: 7,
  costNanos: 100,
});

for (const database of TEST_DATABASES) {
  describe(`SQL experiment store on ${database.name}`, { skip: database.skip }, () => {
    test('a batch whose write failed part-way is counted once when the batch is retried', async () => {
      const handle = await createDatabase(await database.create());
      try {
        await migrateToLatest(handle.db);
        const store = createSqlExperimentStore(handle.db.withPlugin(failStatsWriteOnce(2)));
        const batch = [increment('a', 2), increment('b', 3)];
        // What the batch writer does: the whole batch again until it is written.
        let attempts = 0;
        for (;;) {
          attempts += 1;
          try {
            await store.addStats(batch);
            break;
          } catch (error) {
            if (attempts > 3) throw error;
          }
        }
        const stats = Object.fromEntries((await store.stats('e1')).map((row) => [row.variant, row.calls]));
        assert.deepEqual(stats, { a: 2, b: 3 });
      } finally {
        await handle.close();
      }
    });

    test('increments add to the running totals, repeated variants of one batch summed', async () => {
      const handle = await createDatabase(await database.create());
      try {
        await migrateToLatest(handle.db);
        const store = createSqlExperimentStore(handle.db);
        await store.addStats([]);
        await store.addStats([increment('a', 1), increment('a', 2)]);
        await store.addStats([increment('a', 4)]);
        assert.deepEqual(await store.stats('e1'), [
          { variant: 'a', calls: 7, errors: 3, latencyMsTotal: 30, promptTokens: 15, completionTokens: 21, costNanos: 300 },
        ]);
      } finally {
        await handle.close();
      }
    });
  });
}
