import type { Kysely } from 'kysely';
import { fromJsonColumn, fromNullableJsonColumn, toJsonColumn, toNullableJsonColumn } from '../db/json-column.js';
import type { Database, OrgsTable, TeamsTable, VirtualKeysTable } from '../db/schema.js';
import { newId } from '../lib/ids.js';
import { keyAlias } from '../keys/virtual-key-format.js';
import {
  DEFAULT_ORG_SETTINGS,
  type Budget,
  type KeyRole,
  type Organization,
  type OrgSettings,
  type RateLimits,
  type RateLimitTier,
  type Team,
  type VirtualKey,
} from './tenancy-types.js';

export interface NewOrganization {
  name: string;
  tier?: RateLimitTier;
  customLimits?: Partial<RateLimits>;
  enabledModels?: string[] | null;
  budget?: Budget | null;
  settings?: Partial<OrgSettings>;
}

export interface NewTeam {
  orgId: string;
  name: string;
  allowedModels?: string[] | null;
  budget?: Budget | null;
}

export interface NewVirtualKey {
  orgId: string;
  teamId?: string | null;
  name: string;
  keyHash: string;
  last4: string;
  role?: KeyRole;
  budget?: Budget | null;
  userBudget?: Budget | null;
  limits?: Partial<RateLimits>;
  userLimits?: Partial<RateLimits> | null;
  allowedModels?: string[] | null;
}

export type OrganizationPatch = Partial<Omit<NewOrganization, 'settings'>> & { settings?: Partial<OrgSettings> };
export type TeamPatch = Partial<Omit<NewTeam, 'orgId'>>;
export type KeyPatch = Partial<Pick<NewVirtualKey, 'name' | 'teamId' | 'budget' | 'userBudget' | 'limits' | 'userLimits' | 'allowedModels'>>;

/** Orgs, teams and keys in SQL (SQLite or Postgres through Kysely). */
export interface TenancyStore {
  createOrganization(input: NewOrganization): Promise<Organization>;
  getOrganization(id: string): Promise<Organization | undefined>;
  listOrganizations(): Promise<Organization[]>;
  updateOrganization(id: string, patch: OrganizationPatch): Promise<Organization | undefined>;
  createTeam(input: NewTeam): Promise<Team>;
  getTeam(id: string): Promise<Team | undefined>;
  listTeams(orgId?: string): Promise<Team[]>;
  updateTeam(id: string, patch: TeamPatch): Promise<Team | undefined>;
  createKey(input: NewVirtualKey): Promise<VirtualKey>;
  getKey(id: string): Promise<VirtualKey | undefined>;
  findKeyByHash(hash: string): Promise<VirtualKey | undefined>;
  listKeys(orgId?: string): Promise<VirtualKey[]>;
  updateKey(id: string, patch: KeyPatch): Promise<VirtualKey | undefined>;
  /**
   * Marks the key revoked; returns it, or undefined when unknown. Idempotent: `revokedNow` is true
   * only for the call that changed it from active, so revocation events happen once.
   */
  revokeKey(id: string): Promise<{ key: VirtualKey; revokedNow: boolean } | undefined>;
  /** Batched last-used times (written off the hot path). */
  touchKeys(lastUsed: ReadonlyMap<string, number>): Promise<void>;
}

function toOrganization(row: OrgsTable): Organization {
  return {
    id: row.id,
    name: row.name,
    tier: row.tier as RateLimitTier,
    customLimits: fromJsonColumn(row.custom_limits),
    enabledModels: fromNullableJsonColumn<string[]>(row.enabled_models),
    budget: fromNullableJsonColumn<Budget>(row.budget),
    settings: { ...DEFAULT_ORG_SETTINGS, ...fromJsonColumn(row.settings) },
    createdAt: Number(row.created_at),
  };
}

function toTeam(row: TeamsTable): Team {
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    allowedModels: fromNullableJsonColumn<string[]>(row.allowed_models),
    budget: fromNullableJsonColumn<Budget>(row.budget),
    createdAt: Number(row.created_at),
  };
}

function toVirtualKey(row: VirtualKeysTable): VirtualKey {
  return {
    id: row.id,
    orgId: row.org_id,
    teamId: row.team_id,
    name: row.name,
    alias: keyAlias(row.last4),
    role: row.role as KeyRole,
    status: row.status as VirtualKey['status'],
    budget: fromNullableJsonColumn<Budget>(row.budget),
    userBudget: fromNullableJsonColumn<Budget>(row.user_budget),
    limits: fromJsonColumn(row.limits),
    userLimits: fromNullableJsonColumn<Partial<RateLimits>>(row.user_limits),
    allowedModels: fromNullableJsonColumn<string[]>(row.allowed_models),
    createdAt: Number(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}

export function createSqlTenancyStore(db: Kysely<Database>, now: () => number = Date.now): TenancyStore {
  const store: TenancyStore = {
    async createOrganization(input) {
      const row: OrgsTable = {
        id: newId(),
        name: input.name,
        tier: input.tier ?? 'tier1',
        custom_limits: toJsonColumn(input.customLimits ?? {}),
        enabled_models: toNullableJsonColumn(input.enabledModels),
        budget: toNullableJsonColumn(input.budget),
        settings: toJsonColumn({ ...DEFAULT_ORG_SETTINGS, ...input.settings }),
        created_at: now(),
      };
      await db.insertInto('orgs').values(row).execute();
      return toOrganization(row);
    },
    async getOrganization(id) {
      const row = await db.selectFrom('orgs').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toOrganization(row);
    },
    async listOrganizations() {
      const rows = await db.selectFrom('orgs').selectAll().orderBy('created_at').execute();
      return rows.map(toOrganization);
    },
    async updateOrganization(id, patch) {
      const current = await store.getOrganization(id);
      if (!current) return undefined;
      await db
        .updateTable('orgs')
        .set({
          name: patch.name ?? current.name,
          tier: patch.tier ?? current.tier,
          custom_limits: toJsonColumn(patch.customLimits ?? current.customLimits),
          enabled_models: toNullableJsonColumn(patch.enabledModels === undefined ? current.enabledModels : patch.enabledModels),
          budget: toNullableJsonColumn(patch.budget === undefined ? current.budget : patch.budget),
          settings: toJsonColumn({ ...current.settings, ...patch.settings }),
        })
        .where('id', '=', id)
        .execute();
      return store.getOrganization(id);
    },
    async createTeam(input) {
      const row: TeamsTable = {
        id: newId(),
        org_id: input.orgId,
        name: input.name,
        allowed_models: toNullableJsonColumn(input.allowedModels),
        budget: toNullableJsonColumn(input.budget),
        created_at: now(),
      };
      await db.insertInto('teams').values(row).execute();
      return toTeam(row);
    },
    async getTeam(id) {
      const row = await db.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toTeam(row);
    },
    async listTeams(orgId) {
      let query = db.selectFrom('teams').selectAll();
      if (orgId) query = query.where('org_id', '=', orgId);
      return (await query.orderBy('created_at').execute()).map(toTeam);
    },
    async updateTeam(id, patch) {
      const current = await store.getTeam(id);
      if (!current) return undefined;
      await db
        .updateTable('teams')
        .set({
          name: patch.name ?? current.name,
          allowed_models: toNullableJsonColumn(patch.allowedModels === undefined ? current.allowedModels : patch.allowedModels),
          budget: toNullableJsonColumn(patch.budget === undefined ? current.budget : patch.budget),
        })
        .where('id', '=', id)
        .execute();
      return store.getTeam(id);
    },
    async createKey(input) {
      const row: VirtualKeysTable = {
        id: newId(),
        org_id: input.orgId,
        team_id: input.teamId ?? null,
        name: input.name,
        key_hash: input.keyHash,
        last4: input.last4,
        role: input.role ?? 'inference',
        status: 'active',
        budget: toNullableJsonColumn(input.budget),
        user_budget: toNullableJsonColumn(input.userBudget),
        limits: toJsonColumn(input.limits ?? {}),
        user_limits: toNullableJsonColumn(input.userLimits),
        allowed_models: toNullableJsonColumn(input.allowedModels),
        created_at: now(),
        last_used_at: null,
        revoked_at: null,
      };
      await db.insertInto('virtual_keys').values(row).execute();
      return toVirtualKey(row);
    },
    async getKey(id) {
      const row = await db.selectFrom('virtual_keys').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toVirtualKey(row);
    },
    async findKeyByHash(hash) {
      const row = await db.selectFrom('virtual_keys').selectAll().where('key_hash', '=', hash).executeTakeFirst();
      return row && toVirtualKey(row);
    },
    async listKeys(orgId) {
      let query = db.selectFrom('virtual_keys').selectAll();
      if (orgId) query = query.where('org_id', '=', orgId);
      return (await query.orderBy('created_at').execute()).map(toVirtualKey);
    },
    async updateKey(id, patch) {
      const current = await store.getKey(id);
      if (!current) return undefined;
      await db
        .updateTable('virtual_keys')
        .set({
          name: patch.name ?? current.name,
          team_id: patch.teamId === undefined ? current.teamId : patch.teamId,
          budget: toNullableJsonColumn(patch.budget === undefined ? current.budget : patch.budget),
          user_budget: toNullableJsonColumn(nextUserBudget(current.userBudget, patch.userBudget, now())),
          limits: toJsonColumn(patch.limits ?? current.limits),
          user_limits: toNullableJsonColumn(patch.userLimits === undefined ? current.userLimits : patch.userLimits),
          allowed_models: toNullableJsonColumn(patch.allowedModels === undefined ? current.allowedModels : patch.allowedModels),
        })
        .where('id', '=', id)
        .execute();
      return store.getKey(id);
    },
    async revokeKey(id) {
      const result = await db
        .updateTable('virtual_keys')
        .set({ status: 'revoked', revoked_at: now() })
        .where('id', '=', id)
        .where('status', '=', 'active')
        .executeTakeFirst();
      const key = await store.getKey(id);
      return key && { key, revokedNow: Number(result.numUpdatedRows) > 0 };
    },
    async touchKeys(lastUsed) {
      for (const [id, time] of lastUsed) {
        await db.updateTable('virtual_keys').set({ last_used_at: time }).where('id', '=', id).execute();
      }
    },
  };
  return store;
}

/**
 * A key's per-user budget after a patch: a changed budget keeps its generation (its counters go on);
 * one set where there was none gets a new one, so its counters are new (see Budget.generation).
 */
function nextUserBudget(current: Budget | null, patch: Budget | null | undefined, nowMs: number): Budget | null {
  if (patch === undefined) return current;
  if (patch === null) return null;
  const { generation: _ignored, ...budget } = patch;
  if (current) return current.generation === undefined ? budget : { ...budget, generation: current.generation };
  return { ...budget, generation: nowMs };
}
