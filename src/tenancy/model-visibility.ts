import type { AuthContext } from './tenancy-types.js';

/**
 * A model the caller may use: enabled for the org, allowed for the team and for the key (a null
 * list allows every model). Whether the gateway serves the model is the catalog's question, not this.
 */
export function isModelVisible(auth: AuthContext, modelId: string): boolean {
  if (auth.org.enabledModels && !auth.org.enabledModels.includes(modelId)) return false;
  if (auth.team?.allowedModels && !auth.team.allowedModels.includes(modelId)) return false;
  if (auth.key.allowedModels && !auth.key.allowedModels.includes(modelId)) return false;
  return true;
}
