import { GatewayError, isGatewayError } from '../errors/gateway-error.js';
import { checkModelAccess, type ModelDirectory } from '../http/model-access.js';
import type { GatewayCall, Next, Outcome, Stage } from '../pipeline/stage.js';
import type { TemplateRenderer } from './render-template.js';
import type { TemplateStore } from './sql-template-store.js';
import { admitted } from '../pipeline/admission.js';
import { templateParametersSchema } from './template-input-schema.js';

export interface TemplateStageDeps {
  store: Pick<TemplateStore, 'getVersion'>;
  renderer: TemplateRenderer;
  /** The catalog, to check a model the template names as the edge checked the caller's. */
  models: ModelDirectory;
}

/**
 * Applies a prompt template to a chat request: the one named by gw_prompt_template_id, else the
 * org's default template; its latest version, or the one gw_prompt_version pins (a pin with no
 * template to apply it to is a 400). Merge rule:
 *  - messages: the rendered template messages come first, then the caller's messages;
 *  - parameters: the version's parameters fill in only what the caller left unset;
 *  - model: the version's model replaces the request's, unless an A/B test already chose the
 *    variant for this call (record.abVariant), since the experiment decides the model then; it
 *    must be one the caller may use (checkTemplateModel).
 * Sets x-gw-prompt-version and record.promptVersion.
 */
export function createTemplateStage(deps: TemplateStageDeps): Stage {
  return {
    name: 'template',
    run(call, next) {
      if (call.operation !== 'chat') return next(call);
      const request = call.request as TemplateFields;
      const explicit = request.gw_prompt_template_id ?? undefined;
      const templateId = explicit ?? call.auth.org.settings.defaultPromptTemplateId ?? undefined;
      if (!templateId) {
        // A pinned version with no template to pin it on would otherwise be dropped without a word.
        if (request.gw_prompt_version != null) {
          throw new GatewayError('invalid_request', 'gw_prompt_version pins a version of a prompt template, but this call names none (gw_prompt_template_id) and the organization has no default template.', {
            param: 'gw_prompt_version',
          });
        }
        return next(call);
      }
      return applyTemplate(call, next, request, templateId, explicit);
    },
  };

  async function applyTemplate(call: GatewayCall, next: Next, request: TemplateFields, templateId: string, explicit: string | undefined): Promise<Outcome> {
    // A refused call gets its 429 (or restart), not a template error.
    await admitted(call);
    // A version pin applies to the template the call names, or else to the org's default one.
    const pinned = request.gw_prompt_version ?? undefined;
    const version = await deps.store.getVersion(call.auth.org.id, templateId, pinned);
    if (!version) {
      // A stale org default must not break every request; an explicit id or version the caller sent is their error.
      if (!explicit && pinned === undefined) return next(call);
      const what = pinned === undefined ? `prompt template ${templateId}` : `version ${pinned} of prompt template ${templateId}`;
      throw new GatewayError('invalid_request', `Unknown ${what}.`, { param: pinned === undefined ? 'gw_prompt_template_id' : 'gw_prompt_version' });
    }
    checkStoredParameters(version.parameters, templateId, version.version);
    const rendered = deps.renderer.render(version.messages, request.gw_prompt_variables ?? {});
    const merged: Record<string, unknown> = { ...request, messages: [...rendered, ...((request.messages as unknown[]) ?? [])] };
    for (const [parameter, value] of Object.entries(version.parameters ?? {})) {
      if (merged[parameter] === undefined || merged[parameter] === null) merged[parameter] = value;
    }
    const model = version.model && call.record.abVariant === undefined ? version.model : call.model;
    if (model !== call.model) checkTemplateModel(call, model, deps.models, templateId, version.version);
    merged.model = model;
    call.record.promptVersion = version.version;
    call.record.headers['x-gw-prompt-version'] = String(version.version);
    return next({ ...call, request: merged, model });
  }
}

/**
 * The template's model goes through the edge's check for the caller's: it must exist and serve
 * chat, and the key, its team and its org may use it. Otherwise a template would take a key to a
 * model its restrictions keep it from. The refusal is the edge's (400 or 403), naming the template.
 */
function checkTemplateModel(call: GatewayCall, model: string, models: ModelDirectory, templateId: string, version: number): void {
  try {
    checkModelAccess(call.auth, model, 'chat', models);
  } catch (error) {
    if (!isGatewayError(error)) throw error;
    throw new GatewayError(error.code, `Prompt template ${templateId} (version ${version}) names a model this call cannot use: ${error.message}`, {
      param: 'gw_prompt_template_id',
    });
  }
}

/** Parameter objects already found valid (versions are immutable; the cached store hands out the same object). */
const checkedParameters = new WeakSet<object>();

/**
 * Versions saved before parameters were checked on save may hold values the chat endpoint refuses
 * (temperature "hot"); they are refused here, naming the template, rather than sent upstream.
 */
function checkStoredParameters(parameters: Record<string, unknown> | null | undefined, templateId: string, version: number): void {
  if (!parameters || checkedParameters.has(parameters)) return;
  const result = templateParametersSchema.safeParse(parameters);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new GatewayError('invalid_request', `Prompt template ${templateId} (version ${version}) has an invalid parameter ${issue?.path.join('.')}: ${issue?.message}. Save a new version with a valid value.`, {
      param: 'gw_prompt_template_id',
    });
  }
  checkedParameters.add(parameters);
}

type TemplateFields = Record<string, unknown> & { gw_prompt_template_id?: string | null; gw_prompt_version?: number | null; gw_prompt_variables?: Record<string, unknown> | null };
