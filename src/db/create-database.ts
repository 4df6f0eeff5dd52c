import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type { Database } from './schema.js';
import { availableParallelism } from 'node:os';
import { createKyselyBulkInserter, createPostgresBulkInserter, createSqliteInlineBulkInserter, createSqliteWorkerBulkInserter, type BulkInsert } from './bulk-insert.js';
import { startSqliteCheckpointer } from './sqlite-checkpointer.js';

export type DatabaseDialect = 'sqlite' | 'postgres';

/**
 * How often the checkpoint thread copies the embedded file's write-ahead log back (inline writes
 * only): at 500 req/s about 400 pages a second, a few milliseconds of the thread's time.
 */
const CHECKPOINT_INTERVAL_MS = 1000;

/**
 * How often the batched writers (request log, spend ledger, guardrail log, experiment statistics)
 * write, unless GW_LOG_FLUSH_INTERVAL_MS says otherwise. A Postgres batch is work for a server
 * process that shares the host's CPUs with the gateway: 500 rows a table (a second at 500 req/s)
 * held it for 13–18 ms, and requests arriving meanwhile made the 500 req/s latency tail (p99 5.8
 * ms; 4.5 ms with 200 ms batches, side by side, for ~4% more gateway CPU). On the embedded file the
 * writes run in slices on the event loop itself, and shorter windows only added commits.
 */
export function defaultBatchFlushIntervalMs(dialect: DatabaseDialect): number {
  return dialect === 'postgres' ? 200 : 1000;
}

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: DatabaseDialect;
  /** Batched appends (logs, ledger), off the event loop for the embedded SQLite file. */
  bulkInsert: BulkInsert;
  /** True when the database answers a trivial query (readiness). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /**
   * Where the embedded file's batched inserts run: a writer thread with its own connection, the
   * main thread in small slices, or `auto` (the thread only when this process may use more than
   * one CPU; `os.availableParallelism()` honours the CPU affinity mask).
   */
  sqliteWriter?: 'auto' | 'thread' | 'inline';
  /** Page cache of each embedded-file connection, in KiB (default 2048). */
  sqliteCacheKib?: number;
}

/**
 * Opens the database named by `url`: `sqlite:<path>` (embedded default), `sqlite::memory:`, or
 * `postgres://…`. Drivers are imported lazily so a SQLite install never loads pg and vice versa.
 */
export async function createDatabase(url: string, options: DatabaseOptions = {}): Promise<DatabaseHandle> {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return openPostgres(url);
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length), options.sqliteWriter ?? 'auto', options.sqliteCacheKib ?? 2048);
  throw new Error(`GW_DATABASE_URL must start with sqlite: or postgres://, got "${url.split(':')[0]}:…"`);
}

async function openSqlite(path: string, writer: NonNullable<DatabaseOptions['sqliteWriter']>, cacheKib: number): Promise<DatabaseHandle> {
  const { default: SQLite } = await import('better-sqlite3');
  if (path !== ':memory:') {
    const { mkdirSync } = await import('node:fs');
    const { dirname } = await import('node:path');
    mkdirSync(dirname(path), { recursive: true });
  }
  const connection = new SQLite(path === '' ? ':memory:' : path);
  // WAL lets readers run while the batched writer commits; NORMAL sync is durable across process crashes.
  connection.pragma('journal_mode = WAL');
  connection.pragma('synchronous = NORMAL');
  connection.pragma('busy_timeout = 5000');
  connection.pragma('foreign_keys = ON');
  // A negative cache_size is a size in KiB rather than a page count.
  connection.pragma(`cache_size = -${Math.trunc(cacheKib)}`);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });
  // ':memory:' cannot be shared with a second connection, so it keeps inserts on the main one.
  const inMemory = path === ':memory:' || path === '';
  const useThread = writer === 'thread' || (writer === 'auto' && availableParallelism() > 1);
  const inserter = inMemory ? createKyselyBulkInserter(db) : useThread ? createSqliteWorkerBulkInserter(path, cacheKib) : createSqliteInlineBulkInserter(connection);
  // The writer thread checkpoints inside its own commits, off the event loop; inline writes hand
  // checkpoints to a thread of their own instead.
  const checkpointer = !inMemory && !useThread ? startSqliteCheckpointer(connection, path, { intervalMs: CHECKPOINT_INTERVAL_MS }) : undefined;
  return {
    db,
    dialect: 'sqlite',
    bulkInsert: inserter.insert,
    ping: () => pingWith(db),
    close: async () => {
      await inserter.close();
      await checkpointer?.close();
      await db.destroy();
    },
  };
}

async function openPostgres(url: string): Promise<DatabaseHandle> {
  const pg = await import('pg');
  const { Pool, types } = pg.default;
  // int8 and numeric come back as strings by default; our bigints are nano-dollar amounts and
  // epoch milliseconds, all within Number's exact range (docs/money.md).
  const parseNumber = (value: string) => Number(value);
  const pool = new Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === 20 || oid === 1700 ? parseNumber : types.getTypeParser(oid, format as 'text')) as typeof types.getTypeParser,
    },
  });
  // A dropped connection must not crash the process; queries on it fail and the pool reconnects.
  pool.on('error', () => {});
  // pg-pool listens for a client's errors only while it is idle: one that drops while checked out (a
  // transaction between statements) would emit an unhandled 'error' and end the process. Its query
  // fails on its own, and the pool discards the broken client on release.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    bulkInsert: createPostgresBulkInserter(db).insert,
    ping: () => pingWith(db),
    close: () => db.destroy(),
  };
}

async function pingWith(db: Kysely<Database>): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}
