import { type Kysely, type Migration, PostgresAdapter, sql } from 'kysely';
import { DAY_MS } from './spend-periods.js';

/**
 * spend_daily: the spend ledger summed per account and UTC day, kept by a trigger on
 * spend_ledger. Seeding a spend counter (an org's credit since the start, a budget since its
 * period began) then reads a few rows a day instead of every ledger row since then: with millions
 * of calls behind an org, that sum was a scan of the ledger on the first call after every restart
 * and at every period boundary, and on SQLite it held the event loop for as long (0.5 s at 1.4
 * million rows).
 *
 * One row per (scope, owner, user, day): scope `org` (owner = org id), `team` (team id), `key`
 * (key id, every user) and `user` (key id plus the call's `user` value); `user` is '' except for
 * the `user` scope. Budget periods all begin at a UTC day boundary (spend-periods.ts), so a
 * period's spend is the sum of its days.
 *
 * The trigger sees only rows actually inserted: a retried batch whose rows are already there
 * (insert … on conflict do nothing) adds nothing. On SQLite it runs per row; on Postgres once per
 * statement over the batch's inserted rows, taking row locks in key order, so two instances
 * writing batches at once never deadlock on the same days.
 */

/**
 * The rollup rows one ledger row makes, one per scope that applies to it: each scope's owner and
 * `user` columns, and the condition under which it applies. `row` prefixes the ledger's columns
 * (`new.` in a SQLite row trigger, nothing in a select from a table).
 */
const SCOPES = [
  { scope: 'org', owner: 'org_id', user: null, when: null },
  { scope: 'key', owner: 'key_id', user: null, when: null },
  { scope: 'team', owner: 'team_id', user: null, when: 'team_id is not null' },
  { scope: 'user', owner: 'key_id', user: '"user"', when: '"user" is not null' },
] as const;

function rollupSelect(each: (typeof SCOPES)[number], row: string, from: string): string {
  const user = each.user === null ? "''" : `${row}${each.user}`;
  const where = each.when === null ? '' : ` where ${row}${each.when}`;
  const day = `${row}created_at - ${row}created_at % ${DAY_MS}`;
  return `select '${each.scope}' as scope, ${row}${each.owner} as owner_id, ${user} as "user", ${day} as day_ms, ${row}cost_nanos as cost_nanos${from}${where}`;
}

/** The ledger rows of a source table as rollup rows (one per scope that applies). */
function rollupRowsOf(source: string): string {
  return SCOPES.map((each) => rollupSelect(each, '', ` from ${source}`)).join('\n    union all ');
}

// SQLite reads `INSERT … SELECT … ON CONFLICT` without a WHERE as a join's ON: hence `where true`.
const SQLITE_TRIGGER = `
create trigger spend_daily_rollup after insert on spend_ledger
begin
${SCOPES.map(
  (each) => `  insert into spend_daily (scope, owner_id, "user", day_ms, cost_nanos)
    ${rollupSelect(each, 'new.', '')}${each.when === null ? ' where true' : ''}
    on conflict do update set cost_nanos = cost_nanos + excluded.cost_nanos;`,
).join('\n')}
end`;

const POSTGRES_FUNCTION = `
create or replace function gw_spend_daily_rollup() returns trigger language plpgsql as $$
begin
  insert into spend_daily (scope, owner_id, "user", day_ms, cost_nanos)
    select scope, owner_id, "user", day_ms, sum(cost_nanos) from (${rollupRowsOf('inserted_ledger_rows')}) as rows
    group by scope, owner_id, "user", day_ms
    order by scope, owner_id, "user", day_ms
    on conflict (scope, owner_id, "user", day_ms) do update set cost_nanos = spend_daily.cost_nanos + excluded.cost_nanos;
  return null;
end
$$`;

const POSTGRES_TRIGGER = `
create trigger spend_daily_rollup after insert on spend_ledger
  referencing new table as inserted_ledger_rows
  for each statement execute function gw_spend_daily_rollup()`;

export const spendRollupMigration: Migration = {
  async up(db: Kysely<any>) {
    const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
    // Instances still running the previous version keep appending meanwhile: their batches wait
    // for this transaction (the table lock is held to its commit) and then meet the trigger, so
    // none lands between the backfill's snapshot and the trigger uncounted. On SQLite the
    // migration's write transaction already excludes every other writer.
    if (postgres) await sql`lock table spend_ledger in share row exclusive mode`.execute(db);
    await db.schema
      .createTable('spend_daily')
      .addColumn('scope', 'text', (column) => column.notNull())
      .addColumn('owner_id', 'text', (column) => column.notNull())
      .addColumn('user', 'text', (column) => column.notNull())
      .addColumn('day_ms', 'bigint', (column) => column.notNull())
      .addColumn('cost_nanos', 'bigint', (column) => column.notNull())
      .addPrimaryKeyConstraint('spend_daily_pk', ['scope', 'owner_id', 'user', 'day_ms'])
      .execute();
    // What the ledger already holds (once, at the upgrade), then the trigger keeps it up to date.
    await sql
      .raw(
        `insert into spend_daily (scope, owner_id, "user", day_ms, cost_nanos)
         select scope, owner_id, "user", day_ms, sum(cost_nanos) from (${rollupRowsOf('spend_ledger')}) as rows
         group by scope, owner_id, "user", day_ms`,
      )
      .execute(db);
    if (postgres) {
      await sql.raw(POSTGRES_FUNCTION).execute(db);
      await sql.raw(POSTGRES_TRIGGER).execute(db);
    } else {
      await sql.raw(SQLITE_TRIGGER).execute(db);
    }
  },
};
