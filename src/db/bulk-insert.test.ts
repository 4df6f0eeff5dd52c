import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { createSqliteInlineBulkInserter, createSqliteWorkerBulkInserter, jsonArrayInSlices, type BulkInserter } from './bulk-insert.js';
import type { Database } from './schema.js';

const directory = mkdtempSync(join(tmpdir(), 'gw-bulk-insert-'));
after(() => rmSync(directory, { recursive: true, force: true }));

function openFile(name: string): { path: string; connection: SQLite.Database } {
  const path = join(directory, name);
  const connection = new SQLite(path);
  connection.pragma('journal_mode = WAL');
  connection.exec('create table spend_ledger (id text primary key, request_id text not null unique, cost_nanos bigint not null, "user" text)');
  return { path, connection };
}

const ledgerRows = (from: number, count: number) =>
  Array.from({ length: count }, (_, index) => ({ id: `row-${from + index}`, request_id: `req-${from + index}`, cost_nanos: from + index, user: null })) as unknown as Database['spend_ledger'][];

for (const kind of ['inline', 'thread'] as const) {
  test(`${kind} writer: a batch larger than a slice lands whole, in order, and a retried batch skips rows it already wrote`, async () => {
    const { path, connection } = openFile(`${kind}.db`);
    const inserter: BulkInserter = kind === 'inline' ? createSqliteInlineBulkInserter(connection) : createSqliteWorkerBulkInserter(path);
    try {
      await inserter.insert('spend_ledger', ledgerRows(0, 300), { ignoreConflicts: true });
      await inserter.insert('spend_ledger', ledgerRows(250, 100), { ignoreConflicts: true });
      const rows = connection.prepare('select request_id, cost_nanos from spend_ledger order by rowid').all() as Array<{ request_id: string; cost_nanos: number }>;
      assert.equal(rows.length, 350);
      assert.deepEqual(rows.slice(0, 2), [{ request_id: 'req-0', cost_nanos: 0 }, { request_id: 'req-1', cost_nanos: 1 }]);
      assert.equal(rows.at(-1)!.request_id, 'req-349');
      // Without ignoreConflicts a duplicate is an error, not a silent skip.
      await assert.rejects(inserter.insert('spend_ledger', ledgerRows(0, 1)), /UNIQUE/);
    } finally {
      await inserter.close();
      connection.close();
    }
  });
}

/** Counts event-loop turns: one per loop iteration while it runs. */
function turnCounter(): { turns(): number; stop(): void } {
  let turns = 0;
  let running = true;
  const tick = () => {
    turns++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return { turns: () => turns, stop: () => void (running = false) };
}

test('inline writer: a slice ends when its time is up, and the event loop gets a turn before the next', async () => {
  const { connection } = openFile('turns.db');
  // Each clock read is a millisecond later: every slice is over its time at its first read (4 rows).
  let clock = 0;
  // An idle loop between slices: none of a turn was busy.
  const inserter = createSqliteInlineBulkInserter(connection, { sliceMs: 0.25, now: () => (clock += 1), busyMs: () => 0 });
  const counter = turnCounter();
  try {
    await inserter.insert('spend_ledger', ledgerRows(0, 1_280));
    assert.ok(counter.turns() >= 1_280 / 4 - 1, `a turn between 4-row slices (${counter.turns()} turns)`);
    assert.equal((connection.prepare('select count(*) as n from spend_ledger').get() as { n: number }).n, 1_280);
  } finally {
    counter.stop();
    connection.close();
  }
});

test('inline writer: after a long turn (a busy loop) the next slice may run for half of it, so the writer keeps pace', async () => {
  const { connection } = openFile('busy.db');
  // Each clock read inside a slice is a millisecond; each turn of the loop between slices is 100, all of it busy.
  let clock = 0;
  const inserter = createSqliteInlineBulkInserter(connection, { sliceMs: 0.25, now: () => (clock += 1), busyMs: () => clock });
  let busy = true;
  const busyLoop = () => {
    clock += 100;
    if (busy) setImmediate(busyLoop);
  };
  setImmediate(busyLoop);
  const rowCount = () => (connection.prepare('select count(*) as n from spend_ledger').get() as { n: number }).n;
  // Slices are counted as the distinct row counts seen between turns: a turn of the loop may pass several times between two slices.
  const seen = new Set<number>();
  let watching = true;
  const watch = () => {
    if (!watching) return;
    seen.add(rowCount());
    setImmediate(watch);
  };
  setImmediate(watch);
  try {
    await inserter.insert('spend_ledger', ledgerRows(0, 1_280));
    watching = false;
    // The first slice holds 4 rows; after a turn of a few 100 ms the next may take as long again (all the rest).
    assert.ok(seen.size <= 12, `a few long slices, not 320 short ones (${seen.size} slices)`);
    assert.equal((connection.prepare('select count(*) as n from spend_ledger').get() as { n: number }).n, 1_280);
  } finally {
    busy = false;
    watching = false;
    connection.close();
  }
});

test("inline writer: batches written side by side do not lengthen each other's slices (the writer's own time is not the loop's busy time)", async () => {
  const { connection } = openFile('side-by-side.db');
  // A row costs a millisecond of the clock; the loop does nothing but write, so all of its busy
  // time is the writer's. Four batches at once: each one's turn holds three slices of the others.
  let clock = 0;
  const slices: number[] = [];
  const timed = new Proxy(connection, {
    get(target, property) {
      if (property === 'prepare') {
        return (source: string) => {
          const statement = target.prepare(source);
          return { run: (values: unknown[]) => ((clock += 1), statement.run(values)) };
        };
      }
      if (property === 'transaction') {
        return (body: (...args: never[]) => number) =>
          target.transaction((...args: never[]) => {
            const from = args[3] as number;
            const next = body(...args);
            slices.push(next - from);
            return next;
          });
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const inserter = createSqliteInlineBulkInserter(timed, { sliceMs: 0.25, now: () => clock, busyMs: () => clock });
  try {
    await Promise.all([0, 1, 2, 3].map((batch) => inserter.insert('spend_ledger', ledgerRows(batch * 1_000, 200))));
    assert.equal((connection.prepare('select count(*) as n from spend_ledger').get() as { n: number }).n, 800);
    // Every slice stops at its first clock read (4 rows, 4 ms): counting the other batches' slices as busy time grew them.
    assert.deepEqual([...new Set(slices)], [4], `slice sizes ${[...new Set(slices)].join(', ')}`);
  } finally {
    connection.close();
  }
});

test('inline writer: a batch written within the slice time is one transaction, without a turn', async () => {
  const { connection } = openFile('one-slice.db');
  const inserter = createSqliteInlineBulkInserter(connection, { sliceMs: 0.25, now: () => 0 });
  const counter = turnCounter();
  try {
    await inserter.insert('spend_ledger', ledgerRows(0, 1_280));
    assert.ok(counter.turns() <= 1, `no turn inside one slice (${counter.turns()} turns)`);
    assert.equal((connection.prepare('select count(*) as n from spend_ledger').get() as { n: number }).n, 1_280);
  } finally {
    counter.stop();
    connection.close();
  }
});

test('inline writer: a callback queued with setImmediate after a slice (an upstream request being written) runs before the next slice', async () => {
  const { connection } = openFile('yield.db');
  // Every slice is over its time at its first clock read: 4 rows each.
  let clock = 0;
  const inserter = createSqliteInlineBulkInserter(connection, { sliceMs: 0.25, now: () => (clock += 1), busyMs: () => 0 });
  try {
    const writing = inserter.insert('spend_ledger', ledgerRows(0, 40));
    // The first slice ran synchronously; the writer has already asked for its next turn.
    const rowsWhenQueuedWorkRan = await new Promise<number>((resolve) =>
      setImmediate(() => resolve((connection.prepare('select count(*) as n from spend_ledger').get() as { n: number }).n)),
    );
    await writing;
    assert.equal(rowsWhenQueuedWorkRan, 4, 'only the first slice was written when the queued callback ran');
  } finally {
    connection.close();
  }
});

test('Postgres batch JSON: a callback queued with setImmediate after a slice runs before the next slice', async () => {
  let clock = 0;
  let slicesStarted = 0;
  const now = () => {
    clock += 1;
    return clock;
  };
  const rows = ledgerRows(0, 40);
  // Count slice starts through the rows' own toJSON: the first row of each 4-row slice.
  const counted = rows.map((row, index) => (index % 4 === 0 ? { ...row, toJSON: () => (slicesStarted++, row) } : row));
  const encoding = jsonArrayInSlices(counted, 0.25, now);
  const slicesWhenQueuedWorkRan = await new Promise<number>((resolve) => setImmediate(() => resolve(slicesStarted)));
  assert.equal(await encoding, JSON.stringify(rows));
  assert.equal(slicesWhenQueuedWorkRan, 1);
});

test('inline writer: table and column names must be plain identifiers', async () => {
  const { connection } = openFile('names.db');
  const inserter = createSqliteInlineBulkInserter(connection);
  try {
    await assert.rejects(inserter.insert('spend_ledger', [{ 'id"; drop table x; --': 'a' }] as never), /not a plain identifier/);
  } finally {
    connection.close();
  }
});

test('Postgres batch JSON: the same text as JSON.stringify of the whole batch, whatever the slices', async () => {
  const rows = [
    { id: 'a', cost_nanos: 12, note: 'line\nbreak "quoted" ünïcödé 🙂', missing: undefined, nothing: null, nested: { list: [1, 2] } },
    ...ledgerRows(0, 37),
  ];
  for (const advance of [0, 1]) {
    let clock = 0;
    assert.equal(await jsonArrayInSlices(rows, 0.25, () => (clock += advance)), JSON.stringify(rows));
  }
  assert.equal(await jsonArrayInSlices([], 0.25, () => 0), '[]');
});

test('Postgres batch JSON: encoding ends a slice when its time is up, with a turn of the event loop before the next', async () => {
  let clock = 0;
  const counter = turnCounter();
  try {
    // Each clock read is a millisecond later: every slice is over its time at its first read (4 rows).
    await jsonArrayInSlices(ledgerRows(0, 400), 0.25, () => (clock += 1));
    assert.ok(counter.turns() >= 400 / 4 - 1, `a turn between 4-row slices (${counter.turns()} turns)`);
  } finally {
    counter.stop();
  }
  const quick = turnCounter();
  try {
    await jsonArrayInSlices(ledgerRows(0, 400), 0.25, () => 0);
    assert.ok(quick.turns() <= 1, `one slice when the time allows (${quick.turns()} turns)`);
  } finally {
    quick.stop();
  }
});
