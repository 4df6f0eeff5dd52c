import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { fromJsonColumn, toJsonColumn } from '../db/json-column.js';
import type { Database } from '../db/schema.js';
import type { TemplateMessage } from './render-template.js';
import type { PromptTemplatesTable, PromptTemplateVersionsTable } from './template-tables.js';

export interface PromptTemplate {
  id: string;
  orgId: string;
  name: string;
  description: string | null;
  latestVersion: number;
  createdAt: number;
  updatedAt: number;
}

export interface TemplateVersion {
  templateId: string;
  version: number;
  messages: TemplateMessage[];
  model: string | null;
  parameters: Record<string, unknown> | null;
  createdAt: number;
}

export interface NewTemplateVersion {
  messages: TemplateMessage[];
  model?: string | null;
  parameters?: Record<string, unknown> | null;
}

export interface TemplateStore {
  list(orgId: string): Promise<PromptTemplate[]>;
  get(orgId: string, id: string): Promise<PromptTemplate | undefined>;
  listVersions(orgId: string, id: string): Promise<TemplateVersion[]>;
  /** The pinned version, or the latest when `version` is undefined. */
  getVersion(orgId: string, id: string, version?: number): Promise<TemplateVersion | undefined>;
  /** Creates the template with version 1. Throws on a duplicate name in the org. */
  create(input: { orgId: string; name: string; description?: string | null; first: NewTemplateVersion }): Promise<{ template: PromptTemplate; version: TemplateVersion }>;
  /** Appends version latest+1; earlier versions never change. */
  addVersion(orgId: string, id: string, input: NewTemplateVersion): Promise<TemplateVersion | undefined>;
}

export function createSqlTemplateStore(db: Kysely<Database>, now: () => number = Date.now): TemplateStore {
  async function get(orgId: string, id: string): Promise<PromptTemplate | undefined> {
    const row = await db.selectFrom('prompt_templates').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
    return row && toTemplate(row);
  }
  return {
    async list(orgId) {
      const rows = await db.selectFrom('prompt_templates').selectAll().where('org_id', '=', orgId).orderBy('name').execute();
      return rows.map(toTemplate);
    },
    get,
    async listVersions(orgId, id) {
      if (!(await get(orgId, id))) return [];
      const rows = await db.selectFrom('prompt_template_versions').selectAll().where('template_id', '=', id).orderBy('version').execute();
      return rows.map(toVersion);
    },
    async getVersion(orgId, id, version) {
      // One query: the org check rides on the join, so a foreign template id finds nothing.
      const row = await db
        .selectFrom('prompt_template_versions as v')
        .innerJoin('prompt_templates as t', 't.id', 'v.template_id')
        .selectAll('v')
        .where('t.org_id', '=', orgId)
        .where('t.id', '=', id)
        .$if(version === undefined, (query) => query.whereRef('v.version', '=', 't.latest_version'))
        .$if(version !== undefined, (query) => query.where('v.version', '=', version!))
        .executeTakeFirst();
      return row && toVersion(row);
    },
    async create(input) {
      const time = now();
      const template: PromptTemplatesTable = {
        id: randomUUID(),
        org_id: input.orgId,
        name: input.name,
        description: input.description ?? null,
        latest_version: 1,
        created_at: time,
        updated_at: time,
      };
      const version = versionRow(template.id, 1, input.first, time);
      await db.transaction().execute(async (transaction) => {
        await transaction.insertInto('prompt_templates').values(template).execute();
        await transaction.insertInto('prompt_template_versions').values(version).execute();
      });
      return { template: toTemplate(template), version: toVersion(version) };
    },
    async addVersion(orgId, id, input) {
      // Compare-and-set on latest_version: two concurrent writers cannot both take the same number.
      for (let attempt = 0; attempt < 5; attempt++) {
        const current = await get(orgId, id);
        if (!current) return undefined;
        const next = current.latestVersion + 1;
        const row = versionRow(id, next, input, now());
        const claimed = await db.transaction().execute(async (transaction) => {
          const result = await transaction
            .updateTable('prompt_templates')
            .set({ latest_version: next, updated_at: row.created_at })
            .where('id', '=', id)
            .where('latest_version', '=', current.latestVersion)
            .executeTakeFirst();
          if (Number(result.numUpdatedRows) === 0) return false;
          await transaction.insertInto('prompt_template_versions').values(row).execute();
          return true;
        });
        if (claimed) return toVersion(row);
      }
      throw new Error('prompt template version could not be claimed after concurrent updates');
    },
  };
}

function versionRow(templateId: string, version: number, input: NewTemplateVersion, time: number): PromptTemplateVersionsTable {
  return {
    template_id: templateId,
    version,
    messages: toJsonColumn(input.messages),
    model: input.model ?? null,
    parameters: input.parameters ? toJsonColumn(input.parameters) : null,
    created_at: time,
  };
}

function toTemplate(row: PromptTemplatesTable): PromptTemplate {
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    description: row.description,
    latestVersion: Number(row.latest_version),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

function toVersion(row: PromptTemplateVersionsTable): TemplateVersion {
  return {
    templateId: row.template_id,
    version: Number(row.version),
    messages: fromJsonColumn<TemplateMessage[]>(row.messages),
    model: row.model,
    parameters: row.parameters ? fromJsonColumn<Record<string, unknown>>(row.parameters) : null,
    createdAt: Number(row.created_at),
  };
}
