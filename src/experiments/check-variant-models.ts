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
    const model = variant.model;
    if (model === undefined) return;
    const reason = !models.has(model)
      ? 'is not served by this gateway'
      : !models.supports(model, 'chat')
        ? 'does not support chat completions'
        : enabledModels !== null && !enabledModels.includes(model)
          ? 'is not enabled for this organization'
          : undefined;
    if (reason === undefined) return;
    const param = `variants[${index}].model`;
    throw new GatewayError('invalid_request', `Invalid value for '${param}': the model '${model}' ${reason}.`, { param });
  });
}
