import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { fromJsonColumn, toJsonColumn } from '../db/json-column.js';
import { newTimeOrderedId } from '../lib/ids.js';
import type { Database } from '../db/schema.js';
import type { GuardrailLogsTable, GuardrailsTable } from './guardrail-tables.js';
import type { Guardrail, GuardrailAction, GuardrailKind, GuardrailStage } from './guardrail-types.js';

/** What a caller supplies; the store assigns the id and the times. */
export type NewGuardrail = Omit<Guardrail, 'id' | 'createdAt' | 'updatedAt'>;

export type GuardrailPatch = Partial<Pick<NewGuardrail, 'name' | 'stage' | 'action' | 'enabledByDefault' | 'config'>>;

export interface GuardrailLogEntry {
  id: string;
  orgId: string;
  guardrailId: string;
  guardrailName: string;
  kind: string;
  stage: 'pre' | 'post';
  action: 'blocked' | 'redacted';
  requestId: string;
  keyId: string | null;
  keyAlias: string | null;
  model: string | null;
  findingTypes: string[];
  reason: string | null;
  createdAt: number;
}

export interface GuardrailStore {
  list(orgId: string): Promise<Guardrail[]>;
  /** The org's guardrails when a cache holds them already (cached stores only). */
  peekList?(orgId: string): Guardrail[] | undefined;
  get(orgId: string, id: string): Promise<Guardrail | undefined>;
  /** Throws when the org already has a guardrail of that name (unique constraint). */
  create(input: NewGuardrail): Promise<Guardrail>;
  update(orgId: string, id: string, patch: GuardrailPatch): Promise<Guardrail | undefined>;
  delete(orgId: string, id: string): Promise<boolean>;
  appendLogs(entries: readonly GuardrailLogEntry[]): Promise<void>;
  /** Newest first. */
  listLogs(orgId: string, limit: number): Promise<GuardrailLogEntry[]>;
}

type Db = Kysely<Database>;

export function createSqlGuardrailStore(db: Db, now: () => number = Date.now): GuardrailStore {
  return {
    async list(orgId) {
      const rows = await db.selectFrom('guardrails').selectAll().where('org_id', '=', orgId).execute();
      // Sorted here, not by the database: SQLite compares names by bytes and Postgres by its
      // collation ("b" before "B" or after), and guardrails must run in one order on both.
      return rows.map(toGuardrail).sort(byNameThenId);
    },
    async get(orgId, id) {
      const row = await db.selectFrom('guardrails').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
      return row && toGuardrail(row);
    },
    async create(input) {
      const time = now();
      const row: GuardrailsTable = {
        id: randomUUID(),
        org_id: input.orgId,
        name: input.name,
        kind: input.kind,
        stage: input.stage,
        action: input.action,
        enabled_by_default: input.enabledByDefault ? 1 : 0,
        config: toJsonColumn(input.config),
        created_at: time,
        updated_at: time,
      };
      await db.insertInto('guardrails').values(row).execute();
      return toGuardrail(row);
    },
    async update(orgId, id, patch) {
      const changes: Partial<GuardrailsTable> = { updated_at: now() };
      if (patch.name !== undefined) changes.name = patch.name;
      if (patch.stage !== undefined) changes.stage = patch.stage;
      if (patch.action !== undefined) changes.action = patch.action;
      if (patch.enabledByDefault !== undefined) changes.enabled_by_default = patch.enabledByDefault ? 1 : 0;
      if (patch.config !== undefined) changes.config = toJsonColumn(patch.config);
      const result = await db.updateTable('guardrails').set(changes).where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return undefined;
      return this.get(orgId, id);
    },
    async delete(orgId, id) {
      const result = await db.deleteFrom('guardrails').where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async appendLogs(entries) {
      if (entries.length === 0) return;
      await db.insertInto('guardrail_logs').values(entries.map(toLogRow)).execute();
    },
    async listLogs(orgId, limit) {
      const rows = await db
        .selectFrom('guardrail_logs')
        .selectAll()
        .where('org_id', '=', orgId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return rows.map(toLogEntry);
    },
  };
}

function toGuardrail(row: GuardrailsTable): Guardrail {
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    kind: row.kind as GuardrailKind,
    stage: row.stage as GuardrailStage,
    action: row.action as GuardrailAction,
    enabledByDefault: Number(row.enabled_by_default) === 1,
    config: fromJsonColumn<Record<string, unknown>>(row.config),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

function toLogRow(entry: GuardrailLogEntry): GuardrailLogsTable {
  return {
    id: entry.id,
    org_id: entry.orgId,
    guardrail_id: entry.guardrailId,
    guardrail_name: entry.guardrailName,
    kind: entry.kind,
    stage: entry.stage,
    action: entry.action,
    request_id: entry.requestId,
    key_id: entry.keyId,
    key_alias: entry.keyAlias,
    model: entry.model,
    finding_types: toJsonColumn(entry.findingTypes),
    reason: entry.reason,
    created_at: entry.createdAt,
  };
}

function toLogEntry(row: GuardrailLogsTable): GuardrailLogEntry {
  return {
    id: row.id,
    orgId: row.org_id,
    guardrailId: row.guardrail_id,
    guardrailName: row.guardrail_name,
    kind: row.kind,
    stage: row.stage as 'pre' | 'post',
    action: row.action as 'blocked' | 'redacted',
    requestId: row.request_id,
    keyId: row.key_id,
    keyAlias: row.key_alias,
    model: row.model,
    findingTypes: fromJsonColumn<string[]>(row.finding_types),
    reason: row.reason,
    createdAt: Number(row.created_at),
  };
}

/**
 * An id for log entries (exported so stages and tests share one source): time-ordered like the
 * request log's, so entries written in one millisecond still list in the order they were made.
 */
export function newLogId(): string {
  return newTimeOrderedId();
}

/** By name in code-unit order (the same on every database), then by id for equal names. */
function byNameThenId(left: Guardrail, right: Guardrail): number {
  if (left.name !== right.name) return left.name < right.name ? -1 : 1;
  return left.id < right.id ? -1 : left.id > right.id ? 1 : 0;
}
