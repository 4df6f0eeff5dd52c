import {
  closedCircuit,
  DEFAULT_CIRCUIT_OPTIONS,
  type CircuitOptions,
  type CircuitState,
  type CircuitStore,
} from './circuit-store.js';

interface Entry extends CircuitState {
  windowStart: number;
  /** When the current half-open probe was granted; a probe that never reports is replaced after a cool-down. */
  probeAt: number | null;
}

/** One process's circuits; the same transitions as the Redis store's scripts. */
export function createMemoryCircuitStore(options: Partial<CircuitOptions> = {}): CircuitStore {
  const settings = { ...DEFAULT_CIRCUIT_OPTIONS, ...options };
  const entries = new Map<string, Entry>();
  const entryOf = (deploymentId: string, now: number): Entry => {
    let entry = entries.get(deploymentId);
    if (!entry) {
      entry = { ...closedCircuit(), windowStart: now, probeAt: null };
      entries.set(deploymentId, entry);
    }
    if (now - entry.windowStart >= settings.windowMs) {
      entry.windowStart = now;
      entry.windowCalls = 0;
      entry.windowFailures = 0;
    }
    return entry;
  };

  return {
    acquire(deploymentId, now) {
      const entry = entryOf(deploymentId, now);
      if (entry.state === 'closed') return 'allowed';
      if (entry.state === 'open') {
        if (now - (entry.openedAt ?? now) < settings.coolDownMs) return 'denied';
        entry.state = 'half_open';
        entry.probeAt = now;
        return 'probe';
      }
      if (entry.probeAt !== null && now - entry.probeAt < settings.coolDownMs) return 'denied';
      entry.probeAt = now;
      return 'probe';
    },
    recordSuccess(deploymentId, now) {
      const entry = entryOf(deploymentId, now);
      entry.windowCalls += 1;
      entry.consecutiveFailures = 0;
      if (entry.state !== 'closed') {
        Object.assign(entry, closedCircuit(), { windowStart: now, probeAt: null });
      }
    },
    async recordFailure(deploymentId, now, reason) {
      const entry = entryOf(deploymentId, now);
      entry.windowCalls += 1;
      entry.windowFailures += 1;
      entry.consecutiveFailures += 1;
      if (entry.state === 'half_open') {
        entry.state = 'open';
        entry.openedAt = now;
        entry.probeAt = null;
        entry.reason = reason;
        return false;
      }
      if (entry.state === 'open') return false;
      const rateExceeded =
        entry.windowCalls >= settings.minimumCalls && entry.windowFailures / entry.windowCalls >= settings.failureRate;
      if (entry.consecutiveFailures >= settings.consecutiveFailures || rateExceeded) {
        entry.state = 'open';
        entry.openedAt = now;
        entry.reason = reason;
        return true;
      }
      return false;
    },
    async read(deploymentId, now) {
      const entry = entryOf(deploymentId, now);
      return {
        state: entry.state,
        consecutiveFailures: entry.consecutiveFailures,
        windowFailures: entry.windowFailures,
        windowCalls: entry.windowCalls,
        openedAt: entry.openedAt,
        reason: entry.reason,
      };
    },
  };
}
