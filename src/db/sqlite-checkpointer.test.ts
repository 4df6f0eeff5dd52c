import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { startSqliteCheckpointer } from './sqlite-checkpointer.js';

const directory = mkdtempSync(join(tmpdir(), 'gw-checkpointer-'));
after(() => rmSync(directory, { recursive: true, force: true }));

function openFile(name: string): SQLite.Database {
  const connection = new SQLite(join(directory, name));
  connection.pragma('journal_mode = WAL');
  connection.exec('create table log (id integer primary key, payload text not null)');
  return connection;
}

const autocheckpoint = (connection: SQLite.Database) => connection.pragma('wal_autocheckpoint', { simple: true }) as number;

function writePages(connection: SQLite.Database, rows: number): void {
  const insert = connection.prepare('insert into log (payload) values (?)');
  const payload = 'x'.repeat(2000);
  connection.transaction(() => {
    for (let index = 0; index < rows; index++) insert.run(payload);
  })();
}

async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('checkpointer: commits on the main connection no longer checkpoint; the thread copies the log back; close turns SQLite’s own checkpoints back on', async () => {
  const connection = openFile('main.db');
  const path = join(directory, 'main.db');
  const checkpointer = startSqliteCheckpointer(connection, path, { intervalMs: 50 });
  try {
    assert.equal(autocheckpoint(connection), 0);
    // ~1,500 pages in one commit: past SQLite's 1,000-page default, which would have checkpointed
    // inside this commit.
    const sizeBefore = statSync(path).size;
    writePages(connection, 3000);
    // New pages reach the database file only through a checkpoint: none ran in the commit, and the
    // thread copies them back within a few of its rounds.
    assert.equal(statSync(path).size, sizeBefore);
    await until(() => statSync(path).size > 5_000_000);
    assert.equal((connection.prepare('select count(*) as rows from log').get() as { rows: number }).rows, 3000);
  } finally {
    await checkpointer.close();
  }
  assert.equal(autocheckpoint(connection), 1000);
  connection.close();
});

test('checkpointer: while the thread reports it is behind, the main connection checkpoints as SQLite does by default', async () => {
  const connection = openFile('behind.db');
  const path = join(directory, 'behind.db');
  // A reader holding an old snapshot keeps every later frame from being copied back.
  const reader = new SQLite(path);
  reader.exec('begin');
  reader.prepare('select count(*) from log').get();
  const checkpointer = startSqliteCheckpointer(connection, path, { intervalMs: 30, behindPages: 10 });
  try {
    assert.equal(autocheckpoint(connection), 0);
    writePages(connection, 100);
    await until(() => autocheckpoint(connection) === 1000);
    reader.exec('commit');
    await until(() => autocheckpoint(connection) === 0);
  } finally {
    reader.close();
    await checkpointer.close();
    connection.close();
  }
});

test('checkpointer: a thread that fails to start is reported, and the main connection checkpoints again', async () => {
  const connection = openFile('orphan.db');
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.message);
  process.on('warning', onWarning);
  try {
    // The thread opens its own connection to this path, which cannot exist: it throws at start.
    startSqliteCheckpointer(connection, join(directory, 'missing-directory', 'orphan.db'), { intervalMs: 50 });
    assert.equal(autocheckpoint(connection), 0);
    await until(() => warnings.length > 0);
    assert.match(warnings[0]!, /^SQLite checkpoint thread failed: .+; checkpoints are back on the main connection$/);
    assert.equal(autocheckpoint(connection), 1000);
  } finally {
    process.off('warning', onWarning);
    connection.close();
  }
});
