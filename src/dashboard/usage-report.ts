import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.js';

/** Which rows to aggregate. `orgId` undefined means every org (master only). Times are epoch ms, `to` exclusive. */
export interface UsageFilter {
  orgId?: string;
  from: number;
  to: number;
  keyId?: string;
  model?: string;
  teamId?: string;
}

export type SpendDimension = 'key' | 'model' | 'team';

export interface UsageSummary {
  requests: number;
  errors: number;
  promptTokens: number;
  completionTokens: number;
  costNanos: number;
  cacheHits: number;
  /** Requests that consulted the cache (hit or miss); the denominator of the hit rate. */
  cacheLookups: number;
  latencyMs: { p50: number | null; p95: number | null; p99: number | null };
}

export interface SpendPoint {
  bucket: number;
  group: string;
  label: string;
  costNanos: number;
}

export interface TrafficPoint {
  bucket: number;
  requests: number;
  errors: number;
  tokens: number;
}

export interface KeySpend {
  keyId: string;
  costNanos: number;
}

export interface UsageReport {
  summary(filter: UsageFilter): Promise<UsageSummary>;
  /** Spend from the ledger per time bucket and dimension (key, model or team). */
  spendSeries(filter: UsageFilter, dimension: SpendDimension, bucketMs: number): Promise<SpendPoint[]>;
  /** Requests, errors and tokens per time bucket, from the request log. */
  trafficSeries(filter: UsageFilter, bucketMs: number): Promise<TrafficPoint[]>;
  /** Total ledger spend per key (all time). */
  spendByKey(orgId: string | undefined): Promise<KeySpend[]>;
}

/** pg returns bigint sums and counts as strings; SQLite as numbers. */
const toNumber = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));

export function createUsageReport(db: Kysely<Database>): UsageReport {
  const requestRows = (filter: UsageFilter) => {
    let query = db.selectFrom('request_log').where('created_at', '>=', filter.from).where('created_at', '<', filter.to);
    if (filter.orgId) query = query.where('org_id', '=', filter.orgId);
    if (filter.keyId) query = query.where('key_id', '=', filter.keyId);
    if (filter.model) query = query.where('model', '=', filter.model);
    if (filter.teamId) query = query.where('team_id', '=', filter.teamId);
    return query;
  };

  // Bucket widths are inlined as literals (they are validated integers): Postgres cannot tell that two
  // bound parameters in SELECT and GROUP BY are the same expression.
  // Percentiles by rank (nearest-rank method), one indexed ORDER BY each: portable across SQLite and Postgres.
  async function percentile(filter: UsageFilter, count: number, fraction: number): Promise<number | null> {
    if (count === 0) return null;
    const rank = Math.min(count - 1, Math.max(0, Math.ceil(fraction * count) - 1));
    const row = await requestRows(filter).select('latency_ms').orderBy('latency_ms').limit(1).offset(rank).executeTakeFirst();
    return row ? toNumber(row.latency_ms) : null;
  }

  return {
    async summary(filter) {
      const row = await requestRows(filter)
        .select((builder) => [
          builder.fn.countAll().as('requests'),
          builder.fn.sum<number>(sql`case when status >= 400 then 1 else 0 end`).as('errors'),
          builder.fn.sum<number>('prompt_tokens').as('prompt_tokens'),
          builder.fn.sum<number>('completion_tokens').as('completion_tokens'),
          builder.fn.sum<number>('cost_nanos').as('cost_nanos'),
          builder.fn.sum<number>(sql`case when cache = 'hit' then 1 else 0 end`).as('cache_hits'),
          builder.fn.sum<number>(sql`case when cache in ('hit', 'miss') then 1 else 0 end`).as('cache_lookups'),
        ])
        .executeTakeFirstOrThrow();
      const requests = toNumber(row.requests);
      const [p50, p95, p99] = await Promise.all([0.5, 0.95, 0.99].map((fraction) => percentile(filter, requests, fraction)));
      return {
        requests,
        errors: toNumber(row.errors),
        promptTokens: toNumber(row.prompt_tokens),
        completionTokens: toNumber(row.completion_tokens),
        costNanos: toNumber(row.cost_nanos),
        cacheHits: toNumber(row.cache_hits),
        cacheLookups: toNumber(row.cache_lookups),
        latencyMs: { p50, p95, p99 },
      };
    },

    async spendSeries(filter, dimension, bucketMs) {
      let query = db
        .selectFrom('spend_ledger as ledger')
        .where('ledger.created_at', '>=', filter.from)
        .where('ledger.created_at', '<', filter.to);
      if (filter.orgId) query = query.where('ledger.org_id', '=', filter.orgId);
      if (filter.keyId) query = query.where('ledger.key_id', '=', filter.keyId);
      if (filter.model) query = query.where('ledger.model', '=', filter.model);
      if (filter.teamId) query = query.where('ledger.team_id', '=', filter.teamId);
      const bucket = sql<number>`ledger.created_at - (ledger.created_at % ${sql.lit(Math.max(1, Math.floor(bucketMs)))})`;
      const [groupId, label] =
        dimension === 'key'
          ? [sql<string>`ledger.key_id`, sql<string>`coalesce(vk.name, ledger.key_alias)`]
          : dimension === 'team'
            ? [sql<string>`coalesce(ledger.team_id, '')`, sql<string>`coalesce(team.name, 'no team')`]
            : [sql<string>`ledger.model`, sql<string>`ledger.model`];
      const rows = await query
        .leftJoin('virtual_keys as vk', 'vk.id', 'ledger.key_id')
        .leftJoin('teams as team', 'team.id', 'ledger.team_id')
        .select([bucket.as('bucket'), groupId.as('group_id'), label.as('label'), sql<number>`sum(ledger.cost_nanos)`.as('cost_nanos')])
        .groupBy([bucket, groupId, label])
        .orderBy(sql`1`)
        .execute();
      return rows.map((row) => ({ bucket: toNumber(row.bucket), group: String(row.group_id), label: String(row.label), costNanos: toNumber(row.cost_nanos) }));
    },

    async trafficSeries(filter, bucketMs) {
      const bucket = sql<number>`created_at - (created_at % ${sql.lit(Math.max(1, Math.floor(bucketMs)))})`;
      const rows = await requestRows(filter)
        .select((builder) => [
          bucket.as('bucket'),
          builder.fn.countAll().as('requests'),
          builder.fn.sum<number>(sql`case when status >= 400 then 1 else 0 end`).as('errors'),
          builder.fn.sum<number>(sql`prompt_tokens + completion_tokens`).as('tokens'),
        ])
        .groupBy(bucket)
        .orderBy(sql`bucket`)
        .execute();
      return rows.map((row) => ({ bucket: toNumber(row.bucket), requests: toNumber(row.requests), errors: toNumber(row.errors), tokens: toNumber(row.tokens) }));
    },

    async spendByKey(orgId) {
      let query = db.selectFrom('spend_ledger').select((builder) => ['key_id', builder.fn.sum<number>('cost_nanos').as('cost_nanos')]).groupBy('key_id');
      if (orgId) query = query.where('org_id', '=', orgId);
      const rows = await query.execute();
      return rows.map((row) => ({ keyId: row.key_id, costNanos: toNumber(row.cost_nanos) }));
    },
  };
}
