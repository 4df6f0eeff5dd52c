import { randomUUID } from 'node:crypto';
import { type Kysely, type Migration, type MigrationProvider, Migrator, PostgresAdapter, SqliteAdapter, sql } from 'kysely';
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
  if (db.getExecutor().adapter instanceof SqliteAdapter) return underSqliteGuard(db, () => migrateUnlocked(db, options));
  return migrateUnlocked(db, options);
}

async function migrateUnlocked(db: Kysely<any>, options: MigrateOptions): Promise<string[]> {
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

/** How long a migrating process may hold the SQLite guard before another takes it (it died). */
const SQLITE_GUARD_TTL_MS = 10 * 60_000;
const SQLITE_GUARD_POLL_MS = 100;

/**
 * Kysely's migration lock does nothing on SQLite, so two processes starting on one new file would
 * both migrate and the slower would fail on a table the other created. They take turns on a
 * one-row table instead: each statement is atomic on SQLite, so the insert that lands holds the
 * guard. A holder that died is replaced once its row expires; a live one renews nothing, so the
 * TTL is far above any migration's length.
 */
async function underSqliteGuard<T>(db: Kysely<any>, run: () => Promise<T>): Promise<T> {
  await sql`create table if not exists gw_migration_guard (id integer primary key check (id = 1), holder text not null, expires_at integer not null)`.execute(db);
  const holder = randomUUID();
  for (;;) {
    const now = Date.now();
    await sql`delete from gw_migration_guard where expires_at < ${now}`.execute(db);
    await sql`insert or ignore into gw_migration_guard (id, holder, expires_at) values (1, ${holder}, ${now + SQLITE_GUARD_TTL_MS})`.execute(db);
    const row = (await sql<{ holder: string }>`select holder from gw_migration_guard where id = 1`.execute(db)).rows[0];
    if (row?.holder === holder) break;
    await new Promise((resolve) => setTimeout(resolve, SQLITE_GUARD_POLL_MS));
  }
  try {
    return await run();
  } finally {
    await sql`delete from gw_migration_guard where holder = ${holder}`.execute(db).catch(() => {});
  }
}
