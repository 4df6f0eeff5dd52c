import type { Kysely, Migration } from 'kysely';

/** Guardrail definitions and the guardrail trigger log. */
export const guardrailMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('guardrails')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('org_id', 'text', (column) => column.notNull())
      .addColumn('name', 'text', (column) => column.notNull())
      .addColumn('kind', 'text', (column) => column.notNull())
      .addColumn('stage', 'text', (column) => column.notNull())
      .addColumn('action', 'text', (column) => column.notNull())
      .addColumn('enabled_by_default', 'integer', (column) => column.notNull())
      .addColumn('config', 'text', (column) => column.notNull())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('updated_at', 'bigint', (column) => column.notNull())
      .addUniqueConstraint('guardrails_org_name', ['org_id', 'name'])
      .execute();
    await db.schema
      .createTable('guardrail_logs')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('org_id', 'text', (column) => column.notNull())
      .addColumn('guardrail_id', 'text', (column) => column.notNull())
      .addColumn('guardrail_name', 'text', (column) => column.notNull())
      .addColumn('kind', 'text', (column) => column.notNull())
      .addColumn('stage', 'text', (column) => column.notNull())
      .addColumn('action', 'text', (column) => column.notNull())
      .addColumn('request_id', 'text', (column) => column.notNull())
      .addColumn('key_id', 'text')
      .addColumn('key_alias', 'text')
      .addColumn('model', 'text')
      .addColumn('finding_types', 'text', (column) => column.notNull())
      .addColumn('reason', 'text')
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .execute();
    await db.schema.createIndex('guardrail_logs_org_time').on('guardrail_logs').columns(['org_id', 'created_at']).execute();
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('guardrail_logs').execute();
    await db.schema.dropTable('guardrails').execute();
  },
};
