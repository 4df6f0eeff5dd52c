import { DEFAULT_TIMEOUTS, type Deployment } from './catalog-types.js';

/**
 * A deployment with every optional setting at its default: weight 1, priority 0, default timeouts,
 * no limits, no own price, enabled. `source` is left out when not given.
 */
export function defaultDeployment(
  id: string,
  modelId: string,
  provider: string,
  upstreamModel: string,
  source?: Deployment['source'],
): Deployment {
  return {
    id,
    modelId,
    provider,
    upstreamModel,
    baseUrl: null,
    credentialId: null,
    weight: 1,
    priority: 0,
    timeouts: { ...DEFAULT_TIMEOUTS },
    rpm: null,
    tpm: null,
    pricing: null,
    settings: {},
    enabled: true,
    ...(source === undefined ? {} : { source }),
  };
}
