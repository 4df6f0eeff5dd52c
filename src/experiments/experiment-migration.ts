import type { Kysely, Migration } from 'kysely';

/** A/B experiments and their per-variant outcome totals. */
export const experimentMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('experiments')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('org_id', 'text', (column) => column.notNull())
      .addColumn('name', 'text', (column) => column.notNull())
      .addColumn('target_kind', 'text', (column) => column.notNull())
      .addColumn('target', 'text', (column) => column.notNull())
      .addColumn('variants', 'text', (column) => column.notNull())
      .addColumn('status', 'text', (column) => column.notNull())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('updated_at', 'bigint', (column) => column.notNull())
      .addUniqueConstraint('experiments_org_name', ['org_id', 'name'])
      .execute();
    await db.schema.createIndex('experiments_org_target').on('experiments').columns(['org_id', 'target']).execute();
    await db.schema
      .createTable('experiment_stats')
      .addColumn('experiment_id', 'text', (column) => column.notNull())
      .addColumn('variant', 'text', (column) => column.notNull())
      .addColumn('calls', 'bigint', (column) => column.notNull())
      .addColumn('errors', 'bigint', (column) => column.notNull())
      .addColumn('latency_ms_total', 'bigint', (column) => column.notNull())
      .addColumn('prompt_tokens', 'bigint', (column) => column.notNull())
      .addColumn('completion_tokens', 'bigint', (column) => column.notNull())
      .addColumn('cost_nanos', 'bigint', (column) => column.notNull())
      .addPrimaryKeyConstraint('experiment_stats_pk', ['experiment_id', 'variant'])
      .execute();
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('experiment_stats').execute();
    await db.schema.dropTable('experiments').execute();
  },
};
