import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { isUniqueViolation } from '../../db/is-unique-violation.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { guardrailCreateSchema, guardrailUpdateSchema, parseGuardrailConfig } from '../../guardrails/guardrail-input-schema.js';
import type { Guardrail } from '../../guardrails/guardrail-types.js';
import type { GuardrailLogEntry, GuardrailStore } from '../../guardrails/sql-guardrail-store.js';
import type { ManagementAuth } from '../management-auth.js';
import { limitQuery, parseQuery } from '../parse-query.js';
import { createAdminOrgResolver, orgIdQuery } from '../resolve-admin-org.js';
import { isAbsentAt } from '../../lib/is-absent-at.js';
import { validateBody } from '../validate-body.js';

export interface GuardrailRouteDependencies {
  auth: ManagementAuth;
  store: GuardrailStore;
  /** The trigger-log batch writer: flushed before logs are read, so a trigger shows up at once. */
  logWriter?: { flush(): Promise<void> };
  /** Checks webhook URLs when a guardrail is saved (the same SSRF rules as alert channels). */
  urlGuard?: { checkUrl(url: string): Promise<unknown> };
  orgExists?(orgId: string): Promise<boolean>;
}

const guardrailIdQuery = z.object({ guardrail_id: z.string().min(1) });
const logsQuery = limitQuery(1000, 100);
const updateBody = guardrailUpdateSchema.extend({ org_id: z.string().min(1).optional() });

/**
 * Guardrails (SPEC "Additional authenticated endpoints", issue 5): the org's bearer key reads
 * definitions and the trigger log under /gw/guardrail/*; the master credential or an org-admin key
 * manages them under /api/admin/guardrails.
 */
export function registerGuardrailRoutes(app: FastifyInstance, dependencies: GuardrailRouteDependencies): void {
  const { auth, store } = dependencies;

  const adminOrg = createAdminOrgResolver(auth, dependencies.orgExists);

  async function found(orgId: string, id: string): Promise<Guardrail> {
    const guardrail = await store.get(orgId, id);
    if (!guardrail) throw new GatewayError('not_found', `No guardrail with id '${id}' in this organization.`, { param: 'guardrail_id' });
    return guardrail;
  }

  async function checkConfig(kind: Guardrail['kind'], config: unknown): Promise<Record<string, unknown>> {
    let parsed: Record<string, unknown>;
    try {
      parsed = parseGuardrailConfig(kind, config);
    } catch (error) {
      if (error instanceof z.ZodError) {
        const issue = error.issues[0];
        const path = ['config', ...issue.path.map(String)].join('.');
        const message = isAbsentAt(config ?? {}, issue.path) ? `Missing required parameter: '${path}'.` : `Invalid value for '${path}': ${issue.message}.`;
        throw new GatewayError('invalid_request', message, { param: path });
      }
      throw error;
    }
    if (kind === 'webhook' && dependencies.urlGuard) {
      try {
        await dependencies.urlGuard.checkUrl(parsed.url as string);
      } catch (error) {
        throw new GatewayError('invalid_request', `Invalid value for 'config.url': ${error instanceof Error ? error.message : 'blocked'}.`, { param: 'config.url' });
      }
    }
    return parsed;
  }

  app.get('/gw/guardrail/list', { schema: { tags: ['Guardrails'], security: [{ bearerAuth: [] }] } }, async (request) => {
    const { org } = await auth.requireKey(request);
    const guardrails = await store.list(org.id);
    return { object: 'list', data: guardrails.map((guardrail) => toPublicGuardrail(guardrail, false)) };
  });

  app.get('/gw/guardrail/info', { schema: { tags: ['Guardrails'], security: [{ bearerAuth: [] }] } }, async (request) => {
    const { org } = await auth.requireKey(request);
    const { guardrail_id } = parseQuery(guardrailIdQuery, request.query);
    return toPublicGuardrail(await found(org.id, guardrail_id), false);
  });

  app.get('/gw/guardrail/logs', { schema: { tags: ['Guardrails'], security: [{ bearerAuth: [] }] } }, async (request) => {
    const { org } = await auth.requireKey(request);
    const { limit } = parseQuery(logsQuery, request.query);
    await dependencies.logWriter?.flush();
    const entries = await store.listLogs(org.id, limit);
    return { object: 'list', data: entries.map(toPublicLog) };
  });

  app.get('/api/admin/guardrails', { schema: { tags: ['Guardrails'], security: [{ bearerAuth: [] }] } }, async (request) => {
    const orgId = await adminOrg.fromQuery(request);
    return { object: 'list', data: (await store.list(orgId)).map((guardrail) => toPublicGuardrail(guardrail, true)) };
  });

  app.post('/api/admin/guardrails', { schema: { tags: ['Guardrails'], security: [{ bearerAuth: [] }] } }, async (request) => {
    const principal = await auth.requireAdmin(request);
    const body = validateBody(guardrailCreateSchema, request.body);
    const orgId = await adminOrg.forPrincipal(principal, body.org_id);
    const config = await checkConfig(body.kind, body.config);
    try {
      const guardrail = await store.create({
        orgId,
        name: body.name,
        kind: body.kind,
        stage: body.stage,
        action: body.action,
        enabledByDefault: body.enabled_by_default,
        config,
      });
      return toPublicGuardrail(guardrail, true);
    } catch (error) {
      throw duplicateName(error, body.name);
    }
  });

  app.patch<{ Params: { id: string } }>('/api/admin/guardrails/:id', async (request) => {
    const principal = await auth.requireAdmin(request);
    const body = validateBody(updateBody, request.body);
    const orgId = await adminOrg.forPrincipal(principal, body.org_id ?? parseQuery(orgIdQuery, request.query).org_id);
    const existing = await found(orgId, request.params.id);
    const config = body.config === undefined ? undefined : await checkConfig(existing.kind, body.config);
    try {
      const updated = await store.update(orgId, existing.id, {
        name: body.name,
        stage: body.stage,
        action: body.action,
        enabledByDefault: body.enabled_by_default,
        config,
      });
      return toPublicGuardrail(updated ?? existing, true);
    } catch (error) {
      throw duplicateName(error, body.name ?? existing.name);
    }
  });

  app.delete<{ Params: { id: string } }>('/api/admin/guardrails/:id', async (request) => {
    const orgId = await adminOrg.fromQuery(request);
    if (!(await store.delete(orgId, request.params.id))) await found(orgId, request.params.id);
    return { id: request.params.id, object: 'guardrail', deleted: true };
  });
}

/** Webhook header values can be credentials: the bearer-key view shows their names only. */
function toPublicGuardrail(guardrail: Guardrail, admin: boolean) {
  let config = guardrail.config;
  if (!admin && guardrail.kind === 'webhook' && config.headers && typeof config.headers === 'object') {
    config = { ...config, headers: Object.fromEntries(Object.keys(config.headers).map((name) => [name, '***'])) };
  }
  return {
    id: guardrail.id,
    object: 'guardrail',
    org_id: guardrail.orgId,
    name: guardrail.name,
    kind: guardrail.kind,
    stage: guardrail.stage,
    action: guardrail.action,
    enabled_by_default: guardrail.enabledByDefault,
    config,
    created_at: Math.floor(guardrail.createdAt / 1000),
    updated_at: Math.floor(guardrail.updatedAt / 1000),
  };
}

function toPublicLog(entry: GuardrailLogEntry) {
  return {
    id: entry.id,
    object: 'guardrail.log',
    guardrail_id: entry.guardrailId,
    guardrail_name: entry.guardrailName,
    kind: entry.kind,
    stage: entry.stage,
    action: entry.action,
    request_id: entry.requestId,
    key_alias: entry.keyAlias,
    model: entry.model,
    finding_types: entry.findingTypes,
    reason: entry.reason,
    created_at: Math.floor(entry.createdAt / 1000),
  };
}

function duplicateName(error: unknown, name: string): unknown {
  if (isUniqueViolation(error)) return new GatewayError('conflict', `A guardrail named '${name}' already exists in this organization.`, { param: 'name' });
  return error;
}
