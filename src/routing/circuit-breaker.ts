import { isPromise, type Awaitable } from '../lib/awaitable.js';
import type { EventBus } from '../lib/event-bus.js';
import type { Deployment } from './catalog-types.js';
import type { CircuitPermission, CircuitState, CircuitStore } from './circuit-store.js';

/** `acquire` and `success` answer at once when the store does (circuit-store.ts). */
export interface CircuitBreaker {
  acquire(deployment: Deployment): Awaitable<CircuitPermission>;
  success(deployment: Deployment): Awaitable<void>;
  failure(deployment: Deployment, reason: string): Promise<void>;
  state(deployment: Deployment): Promise<CircuitState | null>;
}

export interface CircuitBreakerDependencies {
  store: CircuitStore;
  eventBus: EventBus;
  /** Epoch milliseconds (shared with other instances through Redis, so wall-clock time). */
  now: () => number;
  logger?: { warn(object: Record<string, unknown>, message: string): void };
}

/**
 * Circuit decisions plus the `provider.outage` announcement. A store that fails (Redis down) must
 * not take routing down with it: the breaker then lets calls through and logs.
 */
export function createCircuitBreaker(dependencies: CircuitBreakerDependencies): CircuitBreaker {
  const { store, eventBus, now, logger } = dependencies;
  const unavailable = <T>(error: unknown, fallback: T, deployment: Deployment): T => {
    logger?.warn({ deploymentId: deployment.id, error: (error as Error).message }, 'circuit store unavailable');
    return fallback;
  };
  // Synchronous answers stay synchronous; only a store's promise gets a handler.
  const tolerate = <T>(operation: () => Awaitable<T>, fallback: T, deployment: Deployment): Awaitable<T> => {
    try {
      const answer = operation();
      return isPromise(answer) ? answer.catch((error: unknown) => unavailable(error, fallback, deployment)) : answer;
    } catch (error) {
      return unavailable(error, fallback, deployment);
    }
  };
  return {
    acquire: (deployment) => tolerate(() => store.acquire(deployment.id, now()), 'allowed' as CircuitPermission, deployment),
    success: (deployment) => tolerate(() => store.recordSuccess(deployment.id, now()), undefined, deployment),
    async failure(deployment, reason) {
      const opened = await tolerate(() => store.recordFailure(deployment.id, now(), reason), false, deployment);
      if (!opened) return;
      eventBus.publish({
        kind: 'provider.outage',
        orgId: null,
        severity: 'CRITICAL',
        title: `Provider outage: ${deployment.provider} deployment ${deployment.id} of ${deployment.modelId}`,
        message: `The circuit of deployment ${deployment.id} (${deployment.provider}, model ${deployment.modelId}) opened after repeated failures (${reason}); calls go to other deployments until a probe succeeds.`,
        details: { model: deployment.modelId, deployment_id: deployment.id, provider: deployment.provider, reason },
        occurredAt: now(),
      });
    },
    state: async (deployment) => tolerate(() => store.read(deployment.id, now()), null, deployment),
  };
}
