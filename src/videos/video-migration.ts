import type { Kysely, Migration } from 'kysely';

export const videoMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('videos')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('org_id', 'text', (column) => column.notNull())
      .addColumn('key_id', 'text', (column) => column.notNull())
      .addColumn('model', 'text', (column) => column.notNull())
      .addColumn('deployment_id', 'text', (column) => column.notNull())
      .addColumn('provider', 'text', (column) => column.notNull())
      .addColumn('upstream_job_id', 'text', (column) => column.notNull())
      .addColumn('status', 'text', (column) => column.notNull())
      .addColumn('progress', 'integer', (column) => column.notNull())
      .addColumn('prompt', 'text', (column) => column.notNull())
      .addColumn('seconds', 'integer', (column) => column.notNull())
      .addColumn('size', 'text', (column) => column.notNull())
      .addColumn('error', 'text')
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('completed_at', 'bigint')
      .addColumn('updated_at', 'bigint', (column) => column.notNull())
      .execute();
    await db.schema.createIndex('videos_status').on('videos').column('status').execute();
  },
};

/**
 * What giving back a failed job's charge needs (video-refunds.ts). The columns are nullable: a
 * previous version still running during a rolling upgrade inserts jobs without them, and those
 * jobs (like the ones made before) are simply not refunded automatically.
 */
export const videoRefundMigration: Migration = {
  async up(db: Kysely<any>) {
    for (const [name, type] of [
      ['request_id', 'text'],
      ['spend_accounts', 'text'],
      ['refunded_at', 'bigint'],
      ['refund_nanos', 'bigint'],
    ] as const) {
      await db.schema.alterTable('videos').addColumn(name, type).execute();
    }
    // The runner looks for failed jobs still owed a refund on every pass.
    await db.schema.createIndex('videos_refunds_owed').on('videos').columns(['status', 'refunded_at']).execute();
  },
};
