import { GatewayError } from '../errors/gateway-error.js';
import type { Variant } from './experiment-types.js';

/** What the check needs of the model catalog: whether a model exists and can serve chat completions. */
export interface ChatModelDirectory {
  has(modelId: string): boolean;
  supports(modelId: string, operation: 'chat'): boolean;
}

/**
 * A variant's model replaces the caller's model on chat calls after the edge's model check, so a
 * model the gateway does not serve, that cannot chat, or that the org has not enabled would fail
 * (or bypass the org's model list) on every call assigned to that variant. Checked when variants are
 * written, at creation and on PATCH. `enabledModels` null means the org may use every catalog model.
 */
export function checkVariantModels(variants: readonly Variant[], models: ChatModelDirectory, enabledModels: readonly string[] | null): void {
  variants.forEach((variant, index) => {
    if (variant.model !== undefined) checkChatModel(`variants[${index}].model`, variant.model, models, enabledModels);
  });
}

/**
 * A model experiment matches calls whose model is its target, and the edge lets through only calls
 * to models the gateway serves for chat and the org has enabled: any other target would make an
 * experiment that never runs. Checked at creation (the target cannot be changed afterwards).
 */
export function checkTargetModel(target: string, models: ChatModelDirectory, enabledModels: readonly string[] | null): void {
  checkChatModel('target', target, models, enabledModels);
}

function checkChatModel(param: string, model: string, models: ChatModelDirectory, enabledModels: readonly string[] | null): void {
  const reason = !models.has(model)
    ? 'is not served by this gateway'
    : !models.supports(model, 'chat')
      ? 'does not support chat completions'
      : enabledModels !== null && !enabledModels.includes(model)
        ? 'is not enabled for this organization'
        : undefined;
  if (reason === undefined) return;
  throw new GatewayError('invalid_request', `Invalid value for '${param}': the model '${model}' ${reason}.`, { param });
}
