import type SQLite from 'better-sqlite3';
import { performance as nodePerformance } from 'node:perf_hooks';
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import { startDatabaseWorker } from './database-worker.js';
import { sqliteInsertSql } from './insert-statement.js';

/**
 * Appends many rows to one table: how the batched writers (request log, spend ledger, guardrail
 * log) reach the database. `ignoreConflicts` skips rows whose unique key exists (a retried batch).
 */
export type BulkInsert = <Table extends keyof Database & string>(
  table: Table,
  rows: ReadonlyArray<Database[Table]>,
  options?: { ignoreConflicts?: boolean },
) => Promise<void>;

export interface BulkInserter {
  insert: BulkInsert;
  close(): Promise<void>;
}

/** Through Kysely on the given connection: Postgres (asynchronous I/O) or an in-memory SQLite. */
export function createKyselyBulkInserter(db: Kysely<Database>): BulkInserter {
  return {
    async insert(table, rows, options = {}) {
      if (rows.length === 0) return;
      let query = db.insertInto(table).values(rows as never);
      if (options.ignoreConflicts) query = query.onConflict((conflict) => conflict.doNothing());
      await query.execute();
    },
    close: async () => {},
  };
}

/**
 * Time one transaction on the main thread may hold the event loop before requests get a turn. A
 * row costs 3-10 µs warm and several times that on a CPU the gateway left idle, so a fixed row
 * count (64, before) ran 0.3 ms on one slice and 1.6 ms on another: the long ones were what a
 * request met in the 500 req/s latency tail. Bounded by time, a slice is as short on a cold CPU as
 * on a warm one.
 */
const INLINE_SLICE_MS = 0.25;
/**
 * When the turn between two slices was long (requests kept the loop busy), the next slice may run
 * for this share of it instead, so the writer keeps pace with a saturated gateway in few, large
 * transactions: at saturation 0.25 ms slices made twice as many commits as 64-row ones, each
 * rewriting the same index pages into the log (~8% less throughput). Only the loop's busy time
 * during the turn counts (event-loop utilization), not the turn's wall time: the turn's timer
 * waits at least a millisecond, and a loop with time to spare (500 req/s) keeps 0.25 ms slices.
 *
 * Nor do the writer's own slices count: one writer serves every table, and the request log's and
 * the ledger's batches fall due on the same tick, so each batch's turn held a slice of the other's.
 * Counted as busy time, it let the next slice run longer, which lengthened the other batch's next
 * turn in turn: at 500 req/s on one core, 7.9 transactions a second (over a third) ran longer than
 * 0.5 ms; 3.0 a second without, in the same total time (`node bench/loop-blockers.mjs`).
 */
const BUSY_TURN_SHARE = 0.5;
/** The clock is read every this many rows (reading it costs more than nothing). */
const ROWS_PER_CLOCK_READ = 4;

/**
 * The turn a sliced writer gives the event loop between two slices: a timer, not setImmediate.
 * undici writes a request on a reused keep-alive connection from a setImmediate callback (it first
 * lets the loop read anything the idle socket received), so an upstream call made while a batch was
 * being written queued its write behind the writer's own next-slice callback and waited a whole
 * slice plus its commit. At 500 req/s on the embedded defaults (`node bench/call-timeline.mjs
 * --rate 500`, "upstream request waiting to be written", paired runs of both builds) its p99 fell
 * from 0.4–1.3 ms to 0.07–0.2 ms. A timer runs after the loop's I/O and check phases, so those
 * writes go first; its ~1 ms floor only stretches a batch's wall time (the writer keeps pace under
 * load through BUSY_TURN_SHARE; CPU per call at saturation unchanged within 1–2%).
 */
function nextWriterTurn(): Promise<void> {
  return new Promise<void>((resolve) => setTimeout(resolve, 0));
}

/** How the writers that work on the event loop itself (inline SQLite, Postgres encoding) slice a batch. */
export interface SlicedWriteOptions {
  sliceMs?: number;
  /** Milliseconds, monotonic (tests pass their own). */
  now?: () => number;
  /** Milliseconds the event loop has been busy so far, monotonic (default: its utilization's `active`; tests pass their own). */
  busyMs?: () => number;
}

const loopBusyMs = () => nodePerformance.eventLoopUtilization().active;

/**
 * On the main thread's own connection, in slices of at most INLINE_SLICE_MS each in its own
 * transaction, with a macrotask turn between slices: a batch of hundreds of rows never holds the
 * event loop for more than a slice. Used when the process has a single CPU to run on, where a
 * writer thread only adds a second JavaScript heap, a serialization and thread hand-offs (measured:
 * ~40 µs of CPU per request and ~15 MB of RSS) without adding any parallelism.
 */
export function createSqliteInlineBulkInserter(connection: SQLite.Database, options: SlicedWriteOptions = {}): BulkInserter {
  const sliceMs = options.sliceMs ?? INLINE_SLICE_MS;
  const now = options.now ?? (() => performance.now());
  const busyMs = options.busyMs ?? loopBusyMs;
  const statements = new Map<string, SQLite.Statement>();
  /** Inserts rows from `from` on until `budgetMs` is spent; returns where the next slice starts. */
  const insertSlice = connection.transaction(
    (statement: SQLite.Statement, rows: ReadonlyArray<Record<string, unknown>>, columns: string[], from: number, budgetMs: number): number => {
      const startedAt = now();
      let index = from;
      while (index < rows.length) {
        const row = rows[index++]!;
        statement.run(columns.map((column) => row[column] ?? null));
        if ((index - from) % ROWS_PER_CLOCK_READ === 0 && now() - startedAt >= budgetMs) break;
      }
      return index;
    },
  );
  const statementFor = (table: string, columns: string[], ignoreConflicts: boolean): SQLite.Statement => {
    const cacheKey = `${table}|${columns.join(',')}|${ignoreConflicts}`;
    let statement = statements.get(cacheKey);
    if (!statement) {
      statement = connection.prepare(sqliteInsertSql(table, columns, ignoreConflicts));
      statements.set(cacheKey, statement);
    }
    return statement;
  };
  /** Milliseconds this writer's slices have taken so far, whichever batch they were part of. */
  let sliceTimeMs = 0;
  return {
    async insert(table, rows, options = {}) {
      if (rows.length === 0) return;
      const columns = Object.keys(rows[0] as object);
      const statement = statementFor(table, columns, options.ignoreConflicts === true);
      const values = rows as unknown as ReadonlyArray<Record<string, unknown>>;
      let next = 0;
      let busyAtSliceEnd = 0;
      let sliceTimeAtSliceEnd = 0;
      while (next < values.length) {
        let budgetMs = sliceMs;
        if (next > 0) {
          await nextWriterTurn();
          const othersBusyMs = busyMs() - busyAtSliceEnd - (sliceTimeMs - sliceTimeAtSliceEnd);
          budgetMs = Math.max(sliceMs, othersBusyMs * BUSY_TURN_SHARE);
        }
        const startedAt = now();
        next = insertSlice(statement, values, columns, next, budgetMs);
        sliceTimeMs += now() - startedAt;
        sliceTimeAtSliceEnd = sliceTimeMs;
        busyAtSliceEnd = busyMs();
      }
    },
    close: async () => {},
  };
}

/**
 * Postgres: the whole batch as one JSON parameter, expanded by the server into rows of the table's
 * own column types (json_populate_recordset). A multi-row VALUES list built with the query builder
 * made one bound parameter and several syntax nodes per cell (thousands per batch), which showed
 * as garbage-collection time under load.
 *
 * The JSON is written row by row in slices of the same length as the SQLite writer's, with a
 * macrotask turn between slices: a second's batch at 500 req/s (500 rows, 200–250 KB of JSON) took
 * 0.5–0.8 ms to encode in one go, and the request log's and the ledger's batches fall due on the
 * same tick, so requests arriving then waited over a millisecond.
 */
export function createPostgresBulkInserter(db: Kysely<Database>, options: SlicedWriteOptions = {}): BulkInserter {
  const sliceMs = options.sliceMs ?? INLINE_SLICE_MS;
  const now = options.now ?? (() => performance.now());
  return {
    async insert(table, rows, insertOptions = {}) {
      if (rows.length === 0) return;
      const columns = sql.join(Object.keys(rows[0] as object).map((column) => sql.ref(column)));
      const conflict = insertOptions.ignoreConflicts ? sql`on conflict do nothing` : sql``;
      const json = await jsonArrayInSlices(rows, sliceMs, now);
      await sql`insert into ${sql.table(table)} (${columns}) select ${columns} from json_populate_recordset(null::${sql.table(table)}, ${json}::json) ${conflict}`.execute(db);
    },
    close: async () => {},
  };
}

/** `JSON.stringify(rows)`, encoded at most `sliceMs` at a time with a macrotask turn between. */
export async function jsonArrayInSlices(rows: ReadonlyArray<unknown>, sliceMs: number, now: () => number): Promise<string> {
  const encoded: string[] = new Array(rows.length);
  let index = 0;
  while (index < rows.length) {
    if (index > 0) await nextWriterTurn();
    const startedAt = now();
    const from = index;
    while (index < rows.length) {
      encoded[index] = JSON.stringify(rows[index++]) ?? 'null';
      if ((index - from) % ROWS_PER_CLOCK_READ === 0 && now() - startedAt >= sliceMs) break;
    }
  }
  return `[${encoded.join(',')}]`;
}

/**
 * A worker thread with its own SQLite connection does the inserts: better-sqlite3 is synchronous,
 * and a batch of hundreds of rows written on the main thread would stall every request for
 * milliseconds (measured: the largest self-time entry of a profile under load).
 */
export function createSqliteWorkerBulkInserter(path: string, cacheKib = 2048): BulkInserter {
  const worker = startDatabaseWorker('sqlite-bulk-insert-worker', { path, cacheKib });
  worker.unref();
  let nextId = 0;
  const pending = new Map<number, { resolve(): void; reject(error: Error): void }>();
  worker.on('message', (message: { id: number; error?: string }) => {
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.error) waiter.reject(new Error(message.error));
    else waiter.resolve();
  });
  const failAll = (error: Error) => {
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  };
  worker.on('error', failAll);
  worker.on('exit', () => failAll(new Error('the SQLite writer thread stopped')));
  return {
    insert(table, rows, options = {}) {
      if (rows.length === 0) return Promise.resolve();
      const columns = Object.keys(rows[0] as object);
      // One JSON string crosses the thread boundary far cheaper than a structured clone of
      // thousands of values (measured: the clone was 5% of the request path's CPU).
      const values = JSON.stringify(rows.map((row) => columns.map((column) => (row as unknown as Record<string, unknown>)[column] ?? null)));
      const id = nextId++;
      return new Promise<void>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.ref();
        worker.postMessage({ id, table, columns, rows: values, ignoreConflicts: options.ignoreConflicts === true });
      }).finally(() => {
        if (pending.size === 0) worker.unref();
      });
    },
    async close() {
      // An unreferenced worker would let the process end before its exit is observed.
      worker.ref();
      await worker.terminate();
    },
  };
}
