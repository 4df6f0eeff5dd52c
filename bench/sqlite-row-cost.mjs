#!/usr/bin/env node
// What a batched write costs on the embedded SQLite file, row by row: the request log's rows, the
// spend ledger's rows (each also updates the daily roll-up, `spend_daily`, through the ledger's
// insert trigger), the same ledger rows on a copy of the schema without that trigger, and an empty
// commit's share (one-row transactions). Fresh files in a temporary directory, migrated to the
// gateway's schema and opened with its settings (WAL, synchronous = NORMAL, 2 MiB page cache, as
// src/db/create-database.ts does); rows shaped as the request recorder and the spend ledger write
// them, with time-ordered ids. The kinds alternate round by round; medians over the rounds.
// Run it on the gateway's CPU (`taskset -c 0 node bench/sqlite-row-cost.mjs`). Needs `npm run build`.
//
//   node bench/sqlite-row-cost.mjs [--rows 50] [--transactions 200] [--rounds 3] [--json]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { percentile } from './lib/call-spans-summary.mjs';

const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const index = argv.indexOf(`--${name}`);
  return index >= 0 && argv[index + 1] !== undefined ? argv[index + 1] : fallback;
};
const rowsPerTransaction = Number(option('rows', 50));
const transactions = Number(option('transactions', 200));
const rounds = Number(option('rounds', 3));
const withinRange = (value, low, high) => Number.isInteger(value) && value >= low && value <= high;
if (!withinRange(rowsPerTransaction, 1, 10_000) || !withinRange(transactions, 10, 100_000) || !withinRange(rounds, 1, 100)) {
  console.error('usage: sqlite-row-cost.mjs [--rows 1-10000] [--transactions 10-100000] [--rounds 1-100] [--json]');
  process.exit(2);
}

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { migrateToLatest } = await import(join(root, 'dist/src/db/migrate.js'));
const { sqliteInsertSql } = await import(join(root, 'dist/src/db/insert-statement.js'));
const { newTimeOrderedId } = await import(join(root, 'dist/src/lib/ids.js'));

async function openMigrated(path) {
  const connection = new SQLite(path);
  connection.pragma('journal_mode = WAL');
  connection.pragma('synchronous = NORMAL');
  connection.pragma('cache_size = -2048');
  await migrateToLatest(new Kysely({ dialect: new SqliteDialect({ database: connection }) }));
  return connection;
}

let sequence = 0;
/** The columns both tables share: who made the call and what it was. */
function callColumns() {
  sequence += 1;
  return {
    id: newTimeOrderedId(),
    request_id: `req_${sequence}_${process.pid}`,
    org_id: 'org-bench',
    key_id: 'key-bench',
    key_alias: 'bench',
    team_id: 'team-bench',
    user: null,
    model: 'gpt-4o-mini',
    operation: 'chat',
  };
}

const requestLogRow = () => ({
  ...callColumns(),
  status: 200,
  error_code: null,
  latency_ms: 0.52,
  prompt_tokens: 12,
  completion_tokens: 30,
  cost_nanos: 19_800,
  deployment_id: 'bench-deployment',
  attempts: 1,
  cache: null,
  stream: 0,
  details: null,
  created_at: Date.now(),
});

const spendLedgerRow = () => ({
  ...callColumns(),
  units: JSON.stringify({ inputTokens: 12, outputTokens: 30 }),
  cost_nanos: 19_800,
  unpriced: 0,
  created_at: Date.now(),
});

/** Median milliseconds of `transactions` transactions of `rows` rows each, built as the inline writer builds them. */
function timeTransactions(connection, table, makeRow, rows, ignoreConflicts) {
  const columns = Object.keys(makeRow());
  const statement = connection.prepare(sqliteInsertSql(table, columns, ignoreConflicts));
  const insertAll = connection.transaction((count) => {
    for (let index = 0; index < count; index++) {
      const row = makeRow();
      statement.run(columns.map((column) => row[column] ?? null));
    }
  });
  const times = [];
  for (let index = 0; index < transactions; index++) {
    const startedAt = performance.now();
    insertAll(rows);
    times.push(performance.now() - startedAt);
  }
  return median(times);
}

const median = (values) => percentile([...values].sort((a, b) => a - b), 50);

const directory = mkdtempSync(join(tmpdir(), 'gw-sqlite-row-cost-'));
try {
  const withTrigger = await openMigrated(join(directory, 'gw.db'));
  const withoutTrigger = await openMigrated(join(directory, 'gw-no-rollup.db'));
  withoutTrigger.exec('drop trigger spend_daily_rollup');
  const kinds = [
    { name: 'request_log row', run: (rows) => timeTransactions(withTrigger, 'request_log', requestLogRow, rows, false) },
    { name: 'spend_ledger row (with the daily roll-up trigger)', run: (rows) => timeTransactions(withTrigger, 'spend_ledger', spendLedgerRow, rows, true) },
    { name: 'spend_ledger row (trigger dropped)', run: (rows) => timeTransactions(withoutTrigger, 'spend_ledger', spendLedgerRow, rows, true) },
    { name: 'one-row transaction (request_log)', single: true, run: () => timeTransactions(withTrigger, 'request_log', requestLogRow, 1, false) },
  ];
  const samples = new Map(kinds.map((kind) => [kind.name, []]));
  for (let round = 0; round < rounds; round++) {
    const ordered = round % 2 === 0 ? kinds : [...kinds].reverse();
    for (const kind of ordered) samples.get(kind.name).push(kind.run(rowsPerTransaction));
  }
  const results = kinds.map((kind) => {
    const transactionMs = median(samples.get(kind.name));
    return kind.single ? { kind: kind.name, transactionMs } : { kind: kind.name, transactionMs, microsecondsPerRow: (transactionMs * 1000) / rowsPerTransaction };
  });
  withTrigger.close();
  withoutTrigger.close();
  if (argv.includes('--json')) console.log(JSON.stringify({ rowsPerTransaction, transactions, rounds, results }));
  else {
    console.log(`${rounds} rounds of ${transactions} transactions, ${rowsPerTransaction} rows each (one-row transactions for the commit); medians`);
    for (const result of results) {
      const perRow = result.microsecondsPerRow === undefined ? '' : `  ${result.microsecondsPerRow.toFixed(2)} µs a row`;
      console.log(`  ${result.kind.padEnd(52)} ${result.transactionMs.toFixed(3)} ms a transaction${perRow}`);
    }
  }
} finally {
  rmSync(directory, { recursive: true, force: true });
}
