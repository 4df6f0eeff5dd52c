import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { fromJsonColumn, toJsonColumn } from '../db/json-column.js';
import type { Database } from '../db/schema.js';
import type { ExperimentsTable, ExperimentStatsTable } from './experiment-tables.js';
import type { Experiment, Variant, VariantStats } from './experiment-types.js';

/** What a caller supplies; the store assigns the id and the times. */
export type NewExperiment = Omit<Experiment, 'id' | 'createdAt' | 'updatedAt'>;

export type ExperimentPatch = Partial<Pick<NewExperiment, 'name' | 'variants' | 'status'>>;

export interface ExperimentStore {
  list(orgId: string): Promise<Experiment[]>;
  /** Active experiments of the org, oldest first (the oldest wins when two share a target). */
  listActive(orgId: string): Promise<Experiment[]>;
  /** The org's active experiments when a cache holds them already (cached stores only). */
  peekActive?(orgId: string): Experiment[] | undefined;
  get(orgId: string, id: string): Promise<Experiment | undefined>;
  create(input: NewExperiment): Promise<Experiment>;
  update(orgId: string, id: string, patch: ExperimentPatch): Promise<Experiment | undefined>;
  delete(orgId: string, id: string): Promise<boolean>;
  /** Adds the given increments to the running totals (upsert that sums). */
  addStats(increments: readonly (VariantStats & { experimentId: string })[]): Promise<void>;
  stats(experimentId: string): Promise<VariantStats[]>;
}

export function createSqlExperimentStore(db: Kysely<Database>, now: () => number = Date.now): ExperimentStore {
  const store: ExperimentStore = {
    async list(orgId) {
      const rows = await db.selectFrom('experiments').selectAll().where('org_id', '=', orgId).orderBy('created_at').orderBy('id').execute();
      return rows.map(toExperiment);
    },
    async listActive(orgId) {
      const rows = await db
        .selectFrom('experiments')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('status', '=', 'active')
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toExperiment);
    },
    async get(orgId, id) {
      const row = await db.selectFrom('experiments').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
      return row && toExperiment(row);
    },
    async create(input) {
      const time = now();
      const row: ExperimentsTable = {
        id: randomUUID(),
        org_id: input.orgId,
        name: input.name,
        target_kind: input.targetKind,
        target: input.target,
        variants: toJsonColumn(input.variants),
        status: input.status,
        created_at: time,
        updated_at: time,
      };
      await db.insertInto('experiments').values(row).execute();
      return toExperiment(row);
    },
    async update(orgId, id, patch) {
      const changes: Partial<ExperimentsTable> = { updated_at: now() };
      if (patch.name !== undefined) changes.name = patch.name;
      if (patch.variants !== undefined) changes.variants = toJsonColumn(patch.variants);
      if (patch.status !== undefined) changes.status = patch.status;
      const result = await db.updateTable('experiments').set(changes).where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return undefined;
      return store.get(orgId, id);
    },
    async delete(orgId, id) {
      const result = await db.deleteFrom('experiments').where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) return false;
      await db.deleteFrom('experiment_stats').where('experiment_id', '=', id).execute();
      return true;
    },
    async addStats(increments) {
      const rows = toStatsRows(increments);
      if (rows.length === 0) return;
      // One statement for the whole batch: it adds everything or nothing, so the batch writer can
      // retry a failed batch without counting any variant twice. INSERT … ON CONFLICT DO UPDATE
      // adding `excluded` values is the same SQL on SQLite and Postgres.
      await db
        .insertInto('experiment_stats')
        .values(rows)
        .onConflict((conflict) =>
          conflict.columns(['experiment_id', 'variant']).doUpdateSet({
            calls: sql`experiment_stats.calls + excluded.calls`,
            errors: sql`experiment_stats.errors + excluded.errors`,
            latency_ms_total: sql`experiment_stats.latency_ms_total + excluded.latency_ms_total`,
            prompt_tokens: sql`experiment_stats.prompt_tokens + excluded.prompt_tokens`,
            completion_tokens: sql`experiment_stats.completion_tokens + excluded.completion_tokens`,
            cost_nanos: sql`experiment_stats.cost_nanos + excluded.cost_nanos`,
          }),
        )
        .execute();
    },
    async stats(experimentId) {
      const rows = await db.selectFrom('experiment_stats').selectAll().where('experiment_id', '=', experimentId).execute();
      return rows.map((row) => ({
        variant: row.variant,
        calls: Number(row.calls),
        errors: Number(row.errors),
        latencyMsTotal: Number(row.latency_ms_total),
        promptTokens: Number(row.prompt_tokens),
        completionTokens: Number(row.completion_tokens),
        costNanos: Number(row.cost_nanos),
      }));
    },
  };
  return store;
}

/**
 * One row per (experiment, variant): Postgres refuses an upsert that touches the same row twice,
 * so repeated pairs are summed first.
 */
function toStatsRows(increments: readonly (VariantStats & { experimentId: string })[]): ExperimentStatsTable[] {
  const rows = new Map<string, ExperimentStatsTable>();
  for (const increment of increments) {
    const id = JSON.stringify([increment.experimentId, increment.variant]);
    const row = rows.get(id) ?? {
      experiment_id: increment.experimentId,
      variant: increment.variant,
      calls: 0,
      errors: 0,
      latency_ms_total: 0,
      prompt_tokens: 0,
      completion_tokens: 0,
      cost_nanos: 0,
    };
    row.calls += increment.calls;
    row.errors += increment.errors;
    row.latency_ms_total += Math.round(increment.latencyMsTotal);
    row.prompt_tokens += increment.promptTokens;
    row.completion_tokens += increment.completionTokens;
    row.cost_nanos += increment.costNanos;
    rows.set(id, row);
  }
  return [...rows.values()];
}

function toExperiment(row: ExperimentsTable): Experiment {
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    targetKind: row.target_kind as Experiment['targetKind'],
    target: row.target,
    variants: fromJsonColumn<Variant[]>(row.variants),
    status: row.status as Experiment['status'],
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
