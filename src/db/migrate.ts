import { type Kysely, type Migration, type MigrationProvider, Migrator, PostgresAdapter, sql } from 'kysely';
import * as core from './migrations/001-core.js';
import { FEATURE_MIGRATIONS } from './migrations/feature-migrations.js';

/** Migrations listed explicitly (no directory scan), so a bundled or compiled build finds them all. */
const MIGRATIONS: Record<string, Migration> = {
  '001-core': core,
  ...FEATURE_MIGRATIONS,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

const MIGRATION_TABLE = 'gw_migrations';

export interface MigrateOptions {
  /**
   * Told when the database already holds migrations this build does not know, all of its own being
   * applied: a newer version migrated it (a rolling upgrade), and this one starts without migrating.
   */
  onSchemaAhead?: (unknownMigrations: string[]) => void;
}

/**
 * Brings the schema up to date; safe to run from several instances (Kysely takes a lock). A build
 * older than the database (the previous version during a rolling upgrade, or a rollback) starts on
 * the newer schema, which only ever adds to what it knows; it refuses only when one of its own
 * migrations is missing from a database that a newer build has migrated.
 */
export async function migrateToLatest(db: Kysely<any>, options: MigrateOptions = {}): Promise<string[]> {
  // Kysely looks for its tables in every schema unless told which one: on a Postgres server holding
  // several gw schemas (search_path per deployment or test) it would find another schema's tables.
  const migrationTableSchema =
    db.getExecutor().adapter instanceof PostgresAdapter
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
      : undefined;
  // Checked before migrating (Kysely would refuse: "previously executed migration … is missing")
  // and again after a failure, in case a newer instance migrated in between.
  const startsAhead = async () => {
    const state = compareWithBuild(await executedMigrations(db, migrationTableSchema));
    if (state.unknown.length === 0) return false;
    if (state.pending.length > 0) {
      throw new Error(
        `database migration failed: the database has migrations this version does not know (${state.unknown.join(', ')}) ` +
          `but lacks some of its own (${state.pending.join(', ')}); run a version that knows them all`,
      );
    }
    options.onSchemaAhead?.(state.unknown);
    return true;
  };
  if (await startsAhead()) return [];
  const migrator = new Migrator({
    db,
    provider,
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: 'gw_migrations_lock',
    migrationTableSchema,
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    if (await startsAhead()) return [];
    throw new Error(`database migration failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
}

/** Names recorded in the migration table; none when it does not exist yet (an empty database). */
async function executedMigrations(db: Kysely<any>, schema: string | undefined): Promise<string[]> {
  const table = schema ? db.withSchema(schema) : db;
  try {
    const rows = await table.selectFrom(MIGRATION_TABLE).select('name').execute();
    return rows.map((row) => String(row.name));
  } catch (error) {
    if (await tableExists(db, schema)) throw error;
    return [];
  }
}

async function tableExists(db: Kysely<any>, schema: string | undefined): Promise<boolean> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  return tables.some((table) => table.name === MIGRATION_TABLE && (schema === undefined || table.schema === schema));
}

/** Which executed migrations this build does not know, and which of its own are not executed. */
function compareWithBuild(executed: readonly string[], known: readonly string[] = Object.keys(MIGRATIONS)): { unknown: string[]; pending: string[] } {
  const executedSet = new Set(executed);
  const knownSet = new Set(known);
  return {
    unknown: executed.filter((name) => !knownSet.has(name)).sort(),
    pending: known.filter((name) => !executedSet.has(name)),
  };
}
