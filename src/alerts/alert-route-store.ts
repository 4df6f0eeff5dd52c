import type { Kysely } from 'kysely';
import { fromJsonColumn, toJsonColumn } from '../db/json-column.js';
import type { Database } from '../db/schema.js';
import type { GatewayEventKind } from '../lib/event-bus.js';

/**
 * Destinations per threshold (SPEC "Events": "Destinations are chosen per threshold"): for an org and
 * an event kind, the channels that receive it, optionally for one budget threshold only. A route
 * without a threshold applies to every event of the kind that has no more specific route.
 */
export interface AlertRoute {
  orgId: string;
  eventKind: GatewayEventKind;
  /** Fraction of the budget (0.5, 0.8, 1), or null for every threshold. */
  threshold: number | null;
  channelIds: string[];
  updatedAt: number;
}

export interface AlertRouteStore {
  /** Replaces the route; an empty channel list removes it. */
  set(route: Omit<AlertRoute, 'updatedAt'>): Promise<void>;
  list(orgId: string): Promise<AlertRoute[]>;
  /** The channels chosen for this event: the exact threshold's route, else the kind's catch-all route, else undefined. */
  channelIdsFor(orgId: string, kind: GatewayEventKind, threshold: number | null): Promise<string[] | undefined>;
}

/**
 * Thresholds arrive as fractions (0.8) or percentages (80). Values above 1 are read as percentages, so
 * "1" means 100%; a 1% threshold cannot be expressed, which no budget needs.
 */
export function normalizeThreshold(value: unknown): number | null {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number) || number <= 0) return null;
  const fraction = number > 1 ? number / 100 : number;
  return Math.round(fraction * 10_000) / 10_000;
}

/**
 * Takes a deleted channel out of every route of its org, and drops routes left without a channel, so
 * GET /gw/alert-routes never lists a channel that no longer exists. Runs on the caller's executor so
 * the channel store can do it in the transaction that deletes the channel.
 */
export async function removeChannelFromRoutes(executor: Kysely<Database>, orgId: string, channelId: string, now: number): Promise<void> {
  // An org has a handful of routes; filtering the JSON lists here keeps the query portable across SQLite and Postgres.
  const rows = await executor.selectFrom('alert_routes').select(['event_kind', 'threshold_key', 'channel_ids']).where('org_id', '=', orgId).execute();
  for (const row of rows) {
    const channelIds = fromJsonColumn<string[]>(row.channel_ids);
    if (!channelIds.includes(channelId)) continue;
    const remaining = channelIds.filter((id) => id !== channelId);
    if (remaining.length === 0) {
      await executor.deleteFrom('alert_routes').where('org_id', '=', orgId).where('event_kind', '=', row.event_kind).where('threshold_key', '=', row.threshold_key).execute();
    } else {
      await executor
        .updateTable('alert_routes')
        .set({ channel_ids: toJsonColumn(remaining), updated_at: now })
        .where('org_id', '=', orgId)
        .where('event_kind', '=', row.event_kind)
        .where('threshold_key', '=', row.threshold_key)
        .execute();
    }
  }
}

function thresholdKey(threshold: number | null): string {
  return threshold === null ? '' : String(threshold);
}

export function createSqlAlertRouteStore(db: Kysely<Database>, now: () => number = Date.now): AlertRouteStore {
  return {
    async set(route) {
      const key = thresholdKey(route.threshold === null ? null : normalizeThreshold(route.threshold));
      await db.transaction().execute(async (transaction) => {
        await transaction
          .deleteFrom('alert_routes')
          .where('org_id', '=', route.orgId)
          .where('event_kind', '=', route.eventKind)
          .where('threshold_key', '=', key)
          .execute();
        if (route.channelIds.length === 0) return;
        await transaction
          .insertInto('alert_routes')
          .values({ org_id: route.orgId, event_kind: route.eventKind, threshold_key: key, channel_ids: toJsonColumn(route.channelIds), updated_at: now() })
          .execute();
      });
    },
    async list(orgId) {
      const rows = await db.selectFrom('alert_routes').selectAll().where('org_id', '=', orgId).orderBy('event_kind').orderBy('threshold_key').execute();
      return rows.map((row) => ({
        orgId: row.org_id,
        eventKind: row.event_kind as GatewayEventKind,
        threshold: row.threshold_key === '' ? null : Number(row.threshold_key),
        channelIds: fromJsonColumn<string[]>(row.channel_ids),
        updatedAt: Number(row.updated_at),
      }));
    },
    async channelIdsFor(orgId, kind, threshold) {
      const keys = threshold === null ? [''] : [thresholdKey(normalizeThreshold(threshold)), ''];
      const rows = await db
        .selectFrom('alert_routes')
        .select(['threshold_key', 'channel_ids'])
        .where('org_id', '=', orgId)
        .where('event_kind', '=', kind)
        .where('threshold_key', 'in', keys)
        .execute();
      const exact = rows.find((row) => row.threshold_key !== '') ?? rows.find((row) => row.threshold_key === '');
      return exact ? fromJsonColumn<string[]>(exact.channel_ids) : undefined;
    },
  };
}
