import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import { createTemplateRenderer } from '../../templates/render-template.js';
import type { TemplateStore } from '../../templates/sql-template-store.js';
import type { ManagementAuth } from '../management-auth.js';
import { validateBody } from '../validate-body.js';

export interface DashboardPromptDependencies {
  auth: ManagementAuth;
  templates: Pick<TemplateStore, 'getVersion'>;
}

const renderBody = z.strictObject({
  prompt_id: z.string().min(1),
  version: z.number().int().min(1).optional(),
  variables: z.record(z.string(), z.unknown()).default({}),
});

/**
 * The Prompts page's "try it": renders one saved version with sample variables through the same
 * sandboxed renderer the template stage uses, without calling a model. Scoped to the caller's org.
 */
export function registerDashboardPromptRoutes(app: FastifyInstance, dependencies: DashboardPromptDependencies): void {
  const renderer = createTemplateRenderer();
  app.post('/dashboard/api/prompt-render', { schema: { tags: ['Dashboard'], summary: 'Render a prompt template version with sample variables' } }, async (request) => {
    const { org } = await dependencies.auth.requireKey(request);
    const input = validateBody(renderBody, request.body);
    const version = await dependencies.templates.getVersion(org.id, input.prompt_id, input.version);
    if (!version) throw new GatewayError('not_found', `No prompt template '${input.prompt_id}'${input.version ? ` version ${input.version}` : ''} in this organization.`, { param: 'prompt_id' });
    return { object: 'prompt.render', prompt_id: input.prompt_id, version: version.version, messages: renderer.render(version.messages, input.variables) };
  });
}
