import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { sqliteInsertSql } from './insert-statement.js';

/**
 * Runs in a worker thread: batched inserts (request log, spend ledger) into the embedded SQLite
 * file through a second connection, so a large batch never blocks the event loop that serves
 * requests. WAL mode lets this writer and the main connection's readers work side by side.
 */
interface InsertMessage {
  id: number;
  table: string;
  columns: string[];
  /** JSON text of the rows, each an array of column values. */
  rows: string;
  ignoreConflicts: boolean;
}

const connection = new SQLite(workerData.path as string);
connection.pragma('journal_mode = WAL');
connection.pragma('synchronous = NORMAL');
connection.pragma('busy_timeout = 5000');
connection.pragma(`cache_size = -${Math.trunc(Number(workerData.cacheKib ?? 2048))}`);

const statements = new Map<string, SQLite.Statement>();

function statementFor(message: InsertMessage): SQLite.Statement {
  const cacheKey = `${message.table}|${message.columns.join(',')}|${message.ignoreConflicts}`;
  let statement = statements.get(cacheKey);
  if (!statement) {
    statement = connection.prepare(sqliteInsertSql(message.table, message.columns, message.ignoreConflicts));
    statements.set(cacheKey, statement);
  }
  return statement;
}

const insertAll = connection.transaction((statement: SQLite.Statement, rows: unknown[][]) => {
  for (const row of rows) statement.run(row);
});

parentPort!.on('message', (message: InsertMessage) => {
  try {
    insertAll(statementFor(message), JSON.parse(message.rows) as unknown[][]);
    parentPort!.postMessage({ id: message.id });
  } catch (error) {
    parentPort!.postMessage({ id: message.id, error: error instanceof Error ? error.message : String(error) });
  }
});
