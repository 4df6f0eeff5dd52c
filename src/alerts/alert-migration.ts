import type { Kysely } from 'kysely';

/** Alert channels, their delivery log and per-threshold destinations (issue 6). */
export const alertMigration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('alert_channels')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('org_id', 'text', (column) => column.notNull())
      .addColumn('name', 'text', (column) => column.notNull())
      .addColumn('channel_type', 'text', (column) => column.notNull())
      .addColumn('config', 'text', (column) => column.notNull())
      .addColumn('secrets_ciphertext', 'text')
      .addColumn('events', 'text', (column) => column.notNull())
      .addColumn('is_active', 'integer', (column) => column.notNull())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('updated_at', 'bigint', (column) => column.notNull())
      .execute();
    await db.schema.createIndex('alert_channels_org').on('alert_channels').column('org_id').execute();

    await db.schema
      .createTable('alert_deliveries')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('channel_id', 'text', (column) => column.notNull())
      .addColumn('org_id', 'text', (column) => column.notNull())
      .addColumn('event_kind', 'text', (column) => column.notNull())
      .addColumn('severity', 'text', (column) => column.notNull())
      .addColumn('delivered', 'integer', (column) => column.notNull())
      .addColumn('http_status', 'integer')
      .addColumn('latency_ms', 'integer', (column) => column.notNull())
      .addColumn('error', 'text')
      .addColumn('test', 'integer', (column) => column.notNull())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .execute();
    await db.schema.createIndex('alert_deliveries_channel_time').on('alert_deliveries').columns(['channel_id', 'created_at']).execute();

    await db.schema
      .createTable('alert_routes')
      .addColumn('org_id', 'text', (column) => column.notNull())
      .addColumn('event_kind', 'text', (column) => column.notNull())
      .addColumn('threshold_key', 'text', (column) => column.notNull())
      .addColumn('channel_ids', 'text', (column) => column.notNull())
      .addColumn('updated_at', 'bigint', (column) => column.notNull())
      .addPrimaryKeyConstraint('alert_routes_pk', ['org_id', 'event_kind', 'threshold_key'])
      .execute();
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('alert_routes').ifExists().execute();
    await db.schema.dropTable('alert_deliveries').ifExists().execute();
    await db.schema.dropTable('alert_channels').ifExists().execute();
  },
};
