import type { CircuitBreaker } from './circuit-breaker.js';
import type { CircuitStateName } from './circuit-store.js';
import type { HealthStore } from './health-store.js';
import type { ModelCatalog } from './model-catalog.js';

/** One row of GET /api/admin/deployments/health. */
export interface DeploymentHealth {
  model: string;
  deploymentId: string;
  provider: string;
  upstreamModel: string;
  enabled: boolean;
  circuit: CircuitStateName | 'unknown';
  circuitOpenedAt: number | null;
  circuitReason: string | null;
  consecutiveFailures: number;
  latencyMs: number | null;
  timeToFirstTokenMs: number | null;
  errorRate: number;
  samples: number;
  inFlight: number;
}

export async function readDeploymentHealth(
  catalog: ModelCatalog,
  breaker: CircuitBreaker,
  health: HealthStore,
): Promise<DeploymentHealth[]> {
  const deployments = catalog.list().flatMap((model) => model.deployments);
  const [stats, circuits] = await Promise.all([
    health.read(deployments.map((deployment) => deployment.id)).catch(() => new Map()),
    Promise.all(deployments.map((deployment) => breaker.state(deployment))),
  ]);
  return deployments.map((deployment, index) => {
    const circuit = circuits[index] ?? null;
    const stat = stats.get(deployment.id);
    return {
      model: deployment.modelId,
      deploymentId: deployment.id,
      provider: deployment.provider,
      upstreamModel: deployment.upstreamModel,
      enabled: deployment.enabled,
      circuit: circuit?.state ?? 'unknown',
      circuitOpenedAt: circuit?.openedAt ?? null,
      circuitReason: circuit?.reason ?? null,
      consecutiveFailures: circuit?.consecutiveFailures ?? 0,
      latencyMs: stat?.latencyMs ?? null,
      timeToFirstTokenMs: stat?.timeToFirstTokenMs ?? null,
      errorRate: stat?.errorRate ?? 0,
      samples: stat?.samples ?? 0,
      inFlight: stat?.inFlight ?? 0,
    };
  });
}
