import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { isUniqueViolation } from '../../db/is-unique-violation.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { diffTemplateVersions } from '../../templates/diff-template-versions.js';
import type { PromptTemplate, TemplateStore, TemplateVersion } from '../../templates/sql-template-store.js';
import { templateCreateSchema, templateVersionSchema } from '../../templates/template-input-schema.js';
import type { ManagementAuth } from '../management-auth.js';
import { parseQuery } from '../parse-query.js';
import { createAdminOrgResolver, orgIdQuery } from '../resolve-admin-org.js';
import { validateBody } from '../validate-body.js';

export interface PromptRouteDependencies {
  auth: ManagementAuth;
  store: TemplateStore;
  orgExists?(orgId: string): Promise<boolean>;
}

const promptIdQuery = z.object({ prompt_id: z.string().min(1) });
/** A new version's body may name the org (master callers); the rest is the version itself. */
const versionBodyOrg = z.looseObject({ org_id: z.string().min(1).optional() });
const diffQuery = z.object({
  prompt_id: z.string().min(1),
  v1: z.coerce.number().int().min(1),
  v2: z.coerce.number().int().min(1),
});

/**
 * Prompt templates (issue 5): the org's bearer key lists them, reads one with its versions and
 * diffs two versions under /gw/prompt/*; the master credential or an org-admin key creates
 * templates and appends versions under /api/admin/prompts. Versions are immutable.
 */
export function registerPromptRoutes(app: FastifyInstance, dependencies: PromptRouteDependencies): void {
  const { auth, store } = dependencies;

  const adminOrg = createAdminOrgResolver(auth, dependencies.orgExists);

  async function found(orgId: string, id: string): Promise<PromptTemplate> {
    const template = await store.get(orgId, id);
    if (!template) throw new GatewayError('not_found', `No prompt template with id '${id}' in this organization.`, { param: 'prompt_id' });
    return template;
  }

  app.get('/gw/prompt/list', { schema: { tags: ['Prompts'], security: [{ bearerAuth: [] }] } }, async (request) => {
    const { org } = await auth.requireKey(request);
    return { object: 'list', data: (await store.list(org.id)).map((template) => toPublicTemplate(template, org.settings.defaultPromptTemplateId)) };
  });

  app.get('/gw/prompt/info', { schema: { tags: ['Prompts'], security: [{ bearerAuth: [] }] } }, async (request) => {
    const { org } = await auth.requireKey(request);
    const { prompt_id } = parseQuery(promptIdQuery, request.query);
    const template = await found(org.id, prompt_id);
    const versions = await store.listVersions(org.id, template.id);
    return { ...toPublicTemplate(template, org.settings.defaultPromptTemplateId), versions: versions.map(toPublicVersion) };
  });

  app.get('/gw/prompt/version/diff', { schema: { tags: ['Prompts'], security: [{ bearerAuth: [] }] } }, async (request) => {
    const { org } = await auth.requireKey(request);
    const { prompt_id, v1, v2 } = parseQuery(diffQuery, request.query);
    const template = await found(org.id, prompt_id);
    const [from, to] = await Promise.all([store.getVersion(org.id, template.id, v1), store.getVersion(org.id, template.id, v2)]);
    if (!from) throw new GatewayError('not_found', `Prompt template '${prompt_id}' has no version ${v1}.`, { param: 'v1' });
    if (!to) throw new GatewayError('not_found', `Prompt template '${prompt_id}' has no version ${v2}.`, { param: 'v2' });
    return { object: 'prompt.diff', prompt_id: template.id, v1, v2, diff: await diffTemplateVersions(template.name, from, to) };
  });

  app.get('/api/admin/prompts', { schema: { tags: ['Prompts'], security: [{ bearerAuth: [] }] } }, async (request) => {
    const orgId = await adminOrg.fromQuery(request);
    return { object: 'list', data: (await store.list(orgId)).map((template) => toPublicTemplate(template, null)) };
  });

  app.post('/api/admin/prompts', { schema: { tags: ['Prompts'], security: [{ bearerAuth: [] }] } }, async (request) => {
    const principal = await auth.requireAdmin(request);
    const body = validateBody(templateCreateSchema, request.body);
    const first = validateBody(templateVersionSchema, { messages: body.messages, model: body.model, parameters: body.parameters });
    const orgId = await adminOrg.forPrincipal(principal, body.org_id);
    try {
      const { template, version } = await store.create({
        orgId,
        name: body.name,
        description: body.description ?? null,
        first: { messages: first.messages, model: first.model ?? null, parameters: first.parameters ?? null },
      });
      return { ...toPublicTemplate(template, null), versions: [toPublicVersion(version)] };
    } catch (error) {
      if (isUniqueViolation(error)) throw new GatewayError('conflict', `A prompt template named '${body.name}' already exists.`, { param: 'name' });
      throw error;
    }
  });

  app.post<{ Params: { id: string } }>('/api/admin/prompts/:id/versions', async (request) => {
    const principal = await auth.requireAdmin(request);
    const { org_id, ...content } = validateBody(versionBodyOrg, request.body ?? {});
    const input = validateBody(templateVersionSchema, content);
    const orgId = await adminOrg.forPrincipal(principal, org_id ?? parseQuery(orgIdQuery, request.query).org_id);
    const template = await found(orgId, request.params.id);
    const version = await store.addVersion(orgId, template.id, { messages: input.messages, model: input.model ?? null, parameters: input.parameters ?? null });
    if (!version) throw new GatewayError('not_found', `No prompt template with id '${request.params.id}' in this organization.`, { param: 'prompt_id' });
    return { prompt_id: template.id, ...toPublicVersion(version) };
  });
}

function toPublicTemplate(template: PromptTemplate, defaultId: string | null) {
  return {
    id: template.id,
    object: 'prompt',
    org_id: template.orgId,
    name: template.name,
    description: template.description,
    latest_version: template.latestVersion,
    is_default: defaultId === template.id,
    created_at: Math.floor(template.createdAt / 1000),
    updated_at: Math.floor(template.updatedAt / 1000),
  };
}

function toPublicVersion(version: TemplateVersion) {
  return {
    object: 'prompt.version',
    version: version.version,
    messages: version.messages,
    model: version.model,
    parameters: version.parameters,
    created_at: Math.floor(version.createdAt / 1000),
  };
}
