import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { RequestLogQuery } from '../../dashboard/request-log-query.js';
import type { UsageFilter, UsageReport } from '../../dashboard/usage-report.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { formatUsd } from '../../metering/format-usd.js';
import { type ManagementAuth, orgScopeOf } from '../management-auth.js';
import { parseQuery } from '../parse-query.js';
import { orgIdQuery } from '../resolve-admin-org.js';

export interface DashboardUsageDependencies {
  auth: ManagementAuth;
  usage: UsageReport;
  requestLog: RequestLogQuery;
  now?: () => number;
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const MAX_RANGE_MS = 400 * DAY_MS;

const rangeQuery = z.object({
  org_id: z.string().min(1).optional(),
  from: z.coerce.number().int().min(0).optional(),
  to: z.coerce.number().int().min(0).optional(),
  key_id: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  team_id: z.string().min(1).optional(),
});
const spendQuery = rangeQuery.extend({
  group_by: z.enum(['key', 'model', 'team']).default('model'),
  bucket: z.enum(['hour', 'day']).optional(),
});
const logQuery = z.object({
  org_id: z.string().min(1).optional(),
  key_id: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  status: z.union([z.enum(['ok', 'error']), z.coerce.number().int().min(100).max(599)]).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});

/** Bucket width: hourly for ranges up to two days, daily beyond (a chart stays readable either way). */
function bucketFor(filter: UsageFilter, requested: 'hour' | 'day' | undefined): number {
  if (requested === 'hour' && filter.to - filter.from <= 31 * DAY_MS) return HOUR_MS;
  if (requested === 'day') return DAY_MS;
  return filter.to - filter.from <= 2 * DAY_MS ? HOUR_MS : DAY_MS;
}

/**
 * Read-only aggregates for the dashboard and scripts: usage and spend over time, per-key spend and
 * the request log (metadata only). The master sees every org (or one by org_id); an org admin only its own.
 */
export function registerDashboardUsageRoutes(app: FastifyInstance, dependencies: DashboardUsageDependencies): void {
  const { auth, usage, requestLog, now = Date.now } = dependencies;
  const schema = { tags: ['Admin'], security: [{ bearerAuth: [] }] };

  async function filterOf(request: FastifyRequest, query: z.infer<typeof rangeQuery>): Promise<UsageFilter> {
    const orgId = orgScopeOf(await auth.requireAdmin(request), query.org_id);
    const to = query.to ?? now();
    const from = query.from ?? to - 7 * DAY_MS;
    if (from >= to) throw new GatewayError('invalid_request', "'from' must be before 'to'.", { param: 'from' });
    if (to - from > MAX_RANGE_MS) throw new GatewayError('invalid_request', 'The date range may span at most 400 days.', { param: 'from' });
    return { orgId, from, to, keyId: query.key_id, model: query.model, teamId: query.team_id };
  }

  app.get('/api/admin/usage/summary', { schema: { ...schema, summary: 'Requests, tokens, errors, latency percentiles and cache hit rate over a range' } }, async (request) => {
    const filter = await filterOf(request, parseQuery(rangeQuery, request.query));
    const summary = await usage.summary(filter);
    return {
      object: 'usage.summary',
      from: filter.from,
      to: filter.to,
      requests: summary.requests,
      errors: summary.errors,
      error_rate: summary.requests ? summary.errors / summary.requests : 0,
      prompt_tokens: summary.promptTokens,
      completion_tokens: summary.completionTokens,
      total_tokens: summary.promptTokens + summary.completionTokens,
      cost_nanos: summary.costNanos,
      spend_usd: formatUsd(summary.costNanos),
      cache_hits: summary.cacheHits,
      cache_lookups: summary.cacheLookups,
      cache_hit_rate: summary.cacheLookups ? summary.cacheHits / summary.cacheLookups : null,
      latency_ms: summary.latencyMs,
    };
  });

  app.get('/api/admin/usage/spend', { schema: { ...schema, summary: 'Spend over time per key, model or team (from the spend ledger)' } }, async (request) => {
    const query = parseQuery(spendQuery, request.query);
    const filter = await filterOf(request, query);
    const bucketMs = bucketFor(filter, query.bucket);
    const points = await usage.spendSeries(filter, query.group_by, bucketMs);
    return {
      object: 'list',
      group_by: query.group_by,
      bucket_ms: bucketMs,
      from: filter.from,
      to: filter.to,
      data: points.map((point) => ({ bucket: point.bucket, group: point.group, label: point.label, cost_nanos: point.costNanos })),
    };
  });

  app.get('/api/admin/usage/traffic', { schema: { ...schema, summary: 'Requests, errors and tokens over time (from the request log)' } }, async (request) => {
    const query = parseQuery(spendQuery, request.query);
    const filter = await filterOf(request, query);
    const bucketMs = bucketFor(filter, query.bucket);
    return { object: 'list', bucket_ms: bucketMs, from: filter.from, to: filter.to, data: await usage.trafficSeries(filter, bucketMs) };
  });

  app.get('/api/admin/usage/keys', { schema: { ...schema, summary: 'Total spend per key' } }, async (request) => {
    const query = parseQuery(orgIdQuery, request.query);
    const orgId = orgScopeOf(await auth.requireAdmin(request), query.org_id);
    const rows = await usage.spendByKey(orgId);
    return { object: 'list', data: rows.map((row) => ({ key_id: row.keyId, cost_nanos: row.costNanos, spend_usd: formatUsd(row.costNanos) })) };
  });

  app.get('/api/admin/request-log', { schema: { ...schema, summary: 'Logged requests, newest first; metadata only' } }, async (request) => {
    const query = parseQuery(logQuery, request.query);
    const orgId = orgScopeOf(await auth.requireAdmin(request), query.org_id);
    const page = await requestLog.list({ orgId, keyId: query.key_id, model: query.model, status: query.status }, { limit: query.limit, offset: query.offset });
    return {
      object: 'list',
      has_more: page.hasMore,
      data: page.items.map((item) => ({
        id: item.id,
        request_id: item.requestId,
        org_id: item.orgId,
        key_id: item.keyId,
        key_alias: item.keyAlias,
        team_id: item.teamId,
        model: item.model,
        operation: item.operation,
        status: item.status,
        error_code: item.errorCode,
        latency_ms: item.latencyMs,
        prompt_tokens: item.promptTokens,
        completion_tokens: item.completionTokens,
        cost_nanos: item.costNanos,
        cost_usd: formatUsd(item.costNanos),
        deployment_id: item.deploymentId,
        attempts: item.attempts,
        cache: item.cache,
        stream: item.stream,
        details: item.details,
        created_at: item.createdAt,
      })),
    };
  });
}
