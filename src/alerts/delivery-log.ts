import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { GatewayEventKind, Severity } from '../lib/event-bus.js';
import { newId } from '../lib/ids.js';

/** One delivery attempt as the channel's log shows it (issue 6: time, event kind, status, latency, error). */
export interface DeliveryRecord {
  id: string;
  channelId: string;
  orgId: string;
  /** The event kind, or 'test' for the channel's test call. */
  eventKind: GatewayEventKind | 'test';
  severity: Severity;
  delivered: boolean;
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
  /** True for the channel's test call. */
  test: boolean;
  createdAt: number;
}

export type NewDeliveryRecord = Omit<DeliveryRecord, 'id'>;

export interface DeliveryLog {
  record(entry: NewDeliveryRecord): Promise<DeliveryRecord>;
  /** Newest first. */
  list(orgId: string, channelId: string, limit: number): Promise<DeliveryRecord[]>;
}

/** Error texts are bounded so a chatty failure cannot bloat the log. */
const MAX_ERROR_LENGTH = 500;

/** Delivery rows older than this are pruned (every PRUNE_EVERY writes), so the log stays bounded. */
export const DELIVERY_RETENTION_MS = 30 * 86_400_000;
const PRUNE_EVERY = 100;

export function createSqlDeliveryLog(db: Kysely<Database>, retentionMs = DELIVERY_RETENTION_MS): DeliveryLog {
  let writes = 0;
  return {
    async record(entry) {
      writes += 1;
      if (writes % PRUNE_EVERY === 0) await db.deleteFrom('alert_deliveries').where('created_at', '<', entry.createdAt - retentionMs).execute();
      const record: DeliveryRecord = { ...entry, id: newId(), error: entry.error === null ? null : entry.error.slice(0, MAX_ERROR_LENGTH) };
      await db
        .insertInto('alert_deliveries')
        .values({
          id: record.id,
          channel_id: record.channelId,
          org_id: record.orgId,
          event_kind: record.eventKind,
          severity: record.severity,
          delivered: record.delivered ? 1 : 0,
          http_status: record.httpStatus,
          latency_ms: Math.round(record.latencyMs),
          error: record.error,
          test: record.test ? 1 : 0,
          created_at: record.createdAt,
        })
        .execute();
      return record;
    },
    async list(orgId, channelId, limit) {
      const rows = await db
        .selectFrom('alert_deliveries')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('channel_id', '=', channelId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return rows.map((row) => ({
        id: row.id,
        channelId: row.channel_id,
        orgId: row.org_id,
        eventKind: row.event_kind as GatewayEventKind | 'test',
        severity: row.severity as Severity,
        delivered: Number(row.delivered) === 1,
        httpStatus: row.http_status === null ? null : Number(row.http_status),
        latencyMs: Number(row.latency_ms),
        error: row.error,
        test: Number(row.test) === 1,
        createdAt: Number(row.created_at),
      }));
    },
  };
}
