import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export interface RequestLogFilter {
  orgId?: string;
  keyId?: string;
  model?: string;
  /** 'ok' = status < 400, 'error' = status >= 400, or one exact HTTP status. */
  status?: 'ok' | 'error' | number;
  from?: number;
  to?: number;
}

/** One logged request as the dashboard shows it: metadata only, never message contents. */
export interface RequestLogItem {
  id: string;
  requestId: string;
  orgId: string | null;
  keyId: string | null;
  keyAlias: string | null;
  teamId: string | null;
  model: string | null;
  operation: string;
  status: number;
  errorCode: string | null;
  latencyMs: number;
  promptTokens: number;
  completionTokens: number;
  costNanos: number;
  deploymentId: string | null;
  attempts: number;
  cache: string | null;
  stream: boolean;
  details: Record<string, unknown> | null;
  createdAt: number;
}

export interface RequestLogPage {
  items: RequestLogItem[];
  hasMore: boolean;
}

export interface RequestLogQuery {
  list(filter: RequestLogFilter, page: { limit: number; offset: number }): Promise<RequestLogPage>;
}

/** Keys of `details` that may carry request text; dropped unless an operator enabled content logging. */
const CONTENT_DETAIL_KEYS = new Set(['messages', 'prompt', 'input', 'response', 'content', 'completion']);

function parseDetails(text: string | null, includeContents: boolean): Record<string, unknown> | null {
  if (!text) return null;
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    if (includeContents) return value;
    return Object.fromEntries(Object.entries(value).filter(([key]) => !CONTENT_DETAIL_KEYS.has(key)));
  } catch {
    return null;
  }
}

export function createRequestLogQuery(db: Kysely<Database>, options: { includeContents: boolean }): RequestLogQuery {
  return {
    async list(filter, page) {
      let query = db.selectFrom('request_log').selectAll();
      if (filter.orgId) query = query.where('org_id', '=', filter.orgId);
      if (filter.keyId) query = query.where('key_id', '=', filter.keyId);
      if (filter.model) query = query.where('model', '=', filter.model);
      if (filter.status === 'ok') query = query.where('status', '<', 400);
      else if (filter.status === 'error') query = query.where('status', '>=', 400);
      else if (typeof filter.status === 'number') query = query.where('status', '=', filter.status);
      if (filter.from !== undefined) query = query.where('created_at', '>=', filter.from);
      if (filter.to !== undefined) query = query.where('created_at', '<', filter.to);
      // One extra row tells the page whether there is a next page without a count query.
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit + 1).offset(page.offset).execute();
      const items = rows.slice(0, page.limit).map((row) => ({
        id: row.id,
        requestId: row.request_id,
        orgId: row.org_id,
        keyId: row.key_id,
        keyAlias: row.key_alias,
        teamId: row.team_id,
        model: row.model,
        operation: row.operation,
        status: Number(row.status),
        errorCode: row.error_code,
        latencyMs: Number(row.latency_ms),
        promptTokens: Number(row.prompt_tokens),
        completionTokens: Number(row.completion_tokens),
        costNanos: Number(row.cost_nanos),
        deploymentId: row.deployment_id,
        attempts: Number(row.attempts),
        cache: row.cache,
        stream: Number(row.stream) === 1,
        details: parseDetails(row.details, options.includeContents),
        createdAt: Number(row.created_at),
      }));
      return { items, hasMore: rows.length > page.limit };
    },
  };
}
