import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
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
  const migrator = new Migrator({ db, provider, migrationTableName: 'gw_migrations', migrationLockTableName: 'gw_migrations_lock', allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw new Error(`database migration failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
}
