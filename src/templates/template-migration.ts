import type { Kysely, Migration } from 'kysely';

/** Prompt templates and their immutable numbered versions. */
export const templateMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('prompt_templates')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('org_id', 'text', (column) => column.notNull())
      .addColumn('name', 'text', (column) => column.notNull())
      .addColumn('description', 'text')
      .addColumn('latest_version', 'integer', (column) => column.notNull())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('updated_at', 'bigint', (column) => column.notNull())
      .addUniqueConstraint('prompt_templates_org_name', ['org_id', 'name'])
      .execute();
    await db.schema
      .createTable('prompt_template_versions')
      .addColumn('template_id', 'text', (column) => column.notNull())
      .addColumn('version', 'integer', (column) => column.notNull())
      .addColumn('messages', 'text', (column) => column.notNull())
      .addColumn('model', 'text')
      .addColumn('parameters', 'text')
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addPrimaryKeyConstraint('prompt_template_versions_pk', ['template_id', 'version'])
      .execute();
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('prompt_template_versions').execute();
    await db.schema.dropTable('prompt_templates').execute();
  },
};
