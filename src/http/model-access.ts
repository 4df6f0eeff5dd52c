import { GatewayError } from '../errors/gateway-error.js';
import type { Operation } from '../protocol/endpoints.js';
import { isModelVisible } from '../tenancy/model-visibility.js';
import type { AuthContext } from '../tenancy/tenancy-types.js';

/** What the edge needs to know of the catalog: whether a model exists and what it serves. */
export interface ModelDirectory {
  has(modelId: string): boolean;
  supports(modelId: string, operation: Operation): boolean;
}

/**
 * 400 for a model the gateway does not know (or that cannot do this operation), 403 for one the
 * key may not use — in that order, so a key cannot probe which models exist elsewhere... except
 * that existence is public through /v1/models anyway.
 */
export function checkModelAccess(auth: AuthContext, modelId: string, operation: Operation, models: ModelDirectory): void {
  if (!models.has(modelId)) {
    throw new GatewayError('unsupported_model', `The model '${modelId}' does not exist or is not served by this gateway.`, { param: 'model' });
  }
  if (!isModelVisible(auth, modelId)) {
    throw new GatewayError('permission_denied', `This key does not have access to the model '${modelId}'.`, { param: 'model' });
  }
  if (!models.supports(modelId, operation)) {
    throw new GatewayError('unsupported_model', `The model '${modelId}' does not support this endpoint.`, { param: 'model' });
  }
}
