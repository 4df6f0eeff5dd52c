import { DEFAULT_EWMA_ALPHA, emptyStats, movingAverage, type DeploymentStats, type HealthStore } from './health-store.js';

export function createMemoryHealthStore(options: { alpha?: number } = {}): HealthStore {
  const alpha = options.alpha ?? DEFAULT_EWMA_ALPHA;
  const stats = new Map<string, DeploymentStats>();
  const statsOf = (deploymentId: string) => {
    let entry = stats.get(deploymentId);
    if (!entry) {
      entry = emptyStats();
      stats.set(deploymentId, entry);
    }
    return entry;
  };
  return {
    begin(deploymentId) {
      statsOf(deploymentId).inFlight += 1;
    },
    end(deploymentId, sample) {
      const entry = statsOf(deploymentId);
      entry.inFlight = Math.max(0, entry.inFlight - 1);
      if (!sample) return;
      entry.samples += 1;
      entry.errorRate = movingAverage(entry.samples === 1 ? null : entry.errorRate, sample.ok ? 0 : 1, alpha);
      if (sample.latencyMs !== undefined) entry.latencyMs = movingAverage(entry.latencyMs, sample.latencyMs, alpha);
      if (sample.timeToFirstTokenMs !== undefined) {
        entry.timeToFirstTokenMs = movingAverage(entry.timeToFirstTokenMs, sample.timeToFirstTokenMs, alpha);
      }
    },
    async read(deploymentIds) {
      return new Map(deploymentIds.map((id) => [id, { ...(stats.get(id) ?? emptyStats()) }]));
    },
  };
}
