import { type Kysely, type Migration, type MigrationProvider, Migrator, PostgresAdapter, sql } from 'kysely';
import * as core from './migrations/001-core.js';
import { FEATURE_MIGRATIONS } from './migrations/feature-migrations.js';

/** Migrations listed explicitly (no directory scan), so a bundled or compiled build finds them all. */
const MIGRATIONS: Record<string, Migration> = {
  '001-core': core,
  ...FEATURE_MIGRATIONS,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/** Brings the schema up to date; safe to run from several instances (Kysely takes a lock). */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  // Kysely looks for its tables in every schema unless told which one: on a Postgres server holding
  // several gw schemas (search_path per deployment or test) it would find another schema's tables.
  const migrationTableSchema =
    db.getExecutor().adapter instanceof PostgresAdapter
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
      : undefined;
  const migrator = new Migrator({
    db,
    provider,
    migrationTableName: 'gw_migrations',
    migrationLockTableName: 'gw_migrations_lock',
    migrationTableSchema,
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw new Error(`database migration failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
}
