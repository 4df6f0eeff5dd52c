import type { Awaitable } from '../lib/awaitable.js';
import type { CounterStore } from '../ratelimit/counter-store.js';
import type { Deployment } from './catalog-types.js';

const MINUTE_MS = 60_000;

/**
 * A deployment's own RPM/TPM capacity (what its upstream account allows). The router skips a
 * deployment that is at capacity and tries the next, instead of sending a call the upstream would
 * refuse with 429. Counters are shared across instances when the counter store is Redis.
 */
export interface DeploymentCapacity {
  /**
   * Counts one request if the deployment has room for it; false when it is at capacity. Answers
   * at once for a deployment without RPM or TPM settings (most of them), which has nothing to count.
   */
  admit(deployment: Deployment, now: number): Awaitable<boolean>;
  /** Adds the tokens a finished call used, for the TPM capacity. */
  recordTokens(deployment: Deployment, tokens: number, now: number): Promise<void>;
}

export function createDeploymentCapacity(store: CounterStore): DeploymentCapacity {
  return {
    admit(deployment, now) {
      if (!deployment.rpm && !deployment.tpm) return true;
      return admitCounted(deployment, now);
    },
    async recordTokens(deployment, tokens, now) {
      if (!deployment.tpm || tokens <= 0) return;
      try {
        await store.adjust(`deployment-tpm:${deployment.id}`, MINUTE_MS, now, tokens);
      } catch {
        // Advisory, as in admit.
      }
    },
  };

  async function admitCounted(deployment: Deployment, now: number): Promise<boolean> {
    const limits = [];
    if (deployment.rpm) limits.push({ key: `deployment-rpm:${deployment.id}`, limit: deployment.rpm, windowMs: MINUTE_MS, amount: 1 });
    // TPM is checked with what earlier calls used (a call's own size is unknown until it ends).
    if (deployment.tpm) limits.push({ key: `deployment-tpm:${deployment.id}`, limit: deployment.tpm, windowMs: MINUTE_MS, amount: 0 });
    try {
      const result = await store.hit(limits, now);
      return result.allowed && (!deployment.tpm || result.states[result.states.length - 1].remaining > 0);
    } catch {
      // Capacity is advisory: with its store away, the upstream's own 429 still protects it.
      return true;
    }
  }
}
