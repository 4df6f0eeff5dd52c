import type { Kysely } from 'kysely';
import { fromJsonColumn, toJsonColumn } from '../db/json-column.js';
import type { Database } from '../db/schema.js';
import type { GatewayEventKind } from '../lib/event-bus.js';
import { newId } from '../lib/ids.js';
import type { SecretBox } from '../lib/secret-box.js';
import { removeChannelFromRoutes } from './alert-route-store.js';
import type { AlertChannelsTable } from './alert-tables.js';
import { type AlertChannel, type AlertChannelPatch, type ChannelType, type NewAlertChannel, SECRET_FIELDS } from './channel-types.js';

/** Durable alert channels of every org. Secrets are sealed with the server's SecretBox before they are stored. */
export interface ChannelStore {
  create(input: NewAlertChannel): Promise<AlertChannel>;
  get(orgId: string, id: string): Promise<AlertChannel | undefined>;
  list(orgId: string): Promise<AlertChannel[]>;
  /** Active channels subscribed to `kind`: of one org, or of every org when `orgId` is null. */
  listSubscribed(kind: GatewayEventKind, orgId: string | null): Promise<AlertChannel[]>;
  update(orgId: string, id: string, patch: AlertChannelPatch): Promise<AlertChannel | undefined>;
  delete(orgId: string, id: string): Promise<boolean>;
}

export interface SqlChannelStoreOptions {
  db: Kysely<Database>;
  secretBox: SecretBox;
  now?: () => number;
}

export function createSqlChannelStore({ db, secretBox, now = Date.now }: SqlChannelStoreOptions): ChannelStore {
  function toRow(channel: AlertChannel): AlertChannelsTable {
    const { publicConfig, secrets } = splitSecrets(channel.type, channel.config as Record<string, unknown>);
    return {
      id: channel.id,
      org_id: channel.orgId,
      name: channel.name,
      channel_type: channel.type,
      config: toJsonColumn(publicConfig),
      secrets_ciphertext: secrets ? secretBox.seal(JSON.stringify(secrets)) : null,
      events: toJsonColumn(channel.events),
      is_active: channel.isActive ? 1 : 0,
      created_at: channel.createdAt,
      updated_at: channel.updatedAt,
    };
  }

  function fromRow(row: AlertChannelsTable): AlertChannel {
    const secrets = row.secrets_ciphertext ? (JSON.parse(secretBox.open(row.secrets_ciphertext)) as Record<string, unknown>) : {};
    return {
      id: row.id,
      orgId: row.org_id,
      name: row.name,
      type: row.channel_type as ChannelType,
      config: { ...fromJsonColumn<Record<string, unknown>>(row.config), ...secrets },
      isActive: Number(row.is_active) === 1,
      events: fromJsonColumn<GatewayEventKind[]>(row.events),
      createdAt: Number(row.created_at),
      updatedAt: Number(row.updated_at),
    } as AlertChannel;
  }

  async function get(orgId: string, id: string): Promise<AlertChannel | undefined> {
    const row = await db.selectFrom('alert_channels').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
    return row ? fromRow(row) : undefined;
  }

  return {
    async create(input) {
      const time = now();
      const channel = { ...input, id: newId(), createdAt: time, updatedAt: time } as AlertChannel;
      await db.insertInto('alert_channels').values(toRow(channel)).execute();
      return channel;
    },
    get,
    async list(orgId) {
      const rows = await db.selectFrom('alert_channels').selectAll().where('org_id', '=', orgId).orderBy('created_at').orderBy('id').execute();
      return rows.map(fromRow);
    },
    async listSubscribed(kind, orgId) {
      let query = db.selectFrom('alert_channels').selectAll().where('is_active', '=', 1);
      if (orgId !== null) query = query.where('org_id', '=', orgId);
      const rows = await query.orderBy('created_at').orderBy('id').execute();
      // Subscriptions are a short JSON list; filtering here keeps the query portable across SQLite and Postgres.
      return rows.filter((row) => fromJsonColumn<string[]>(row.events).includes(kind)).map(fromRow);
    },
    async update(orgId, id, patch) {
      const current = await get(orgId, id);
      if (!current) return undefined;
      const next = {
        ...current,
        name: patch.name ?? current.name,
        config: patch.config ?? current.config,
        isActive: patch.isActive ?? current.isActive,
        events: patch.events ?? current.events,
        updatedAt: now(),
      } as AlertChannel;
      const row = toRow(next);
      await db
        .updateTable('alert_channels')
        .set({ name: row.name, config: row.config, secrets_ciphertext: row.secrets_ciphertext, events: row.events, is_active: row.is_active, updated_at: row.updated_at })
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .execute();
      return next;
    },
    /** Also removes the channel from the org's alert routes, in the same transaction. */
    async delete(orgId, id) {
      return db.transaction().execute(async (transaction) => {
        const result = await transaction.deleteFrom('alert_channels').where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
        if (Number(result.numDeletedRows) === 0) return false;
        await removeChannelFromRoutes(transaction, orgId, id, now());
        return true;
      });
    },
  };
}

/** Separates the fields that must be sealed (SECRET_FIELDS) from the ones stored in clear. */
function splitSecrets(type: ChannelType, config: Record<string, unknown>): { publicConfig: Record<string, unknown>; secrets: Record<string, unknown> | null } {
  const publicConfig: Record<string, unknown> = {};
  const secrets: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(config)) {
    if (value === undefined) continue;
    if (SECRET_FIELDS[type].includes(field)) secrets[field] = value;
    else publicConfig[field] = value;
  }
  return { publicConfig, secrets: Object.keys(secrets).length > 0 ? secrets : null };
}
