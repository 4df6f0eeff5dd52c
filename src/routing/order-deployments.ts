import type { Deployment, RoutingStrategy } from './catalog-types.js';
import type { DeploymentStats } from './health-store.js';

export interface OrderingInputs {
  /** Uniform in [0, 1); injected so tests can fix the draw. */
  random: () => number;
  /** Needed by least-latency and least-busy; missing entries count as "no data yet". */
  stats?: ReadonlyMap<string, DeploymentStats>;
  /** Comparable price (any fixed unit); undefined = unknown, ordered as the most expensive. */
  priceOf?: (deployment: Deployment) => number | undefined;
  /** Streams are ranked by time to first token, other calls by full latency. */
  stream?: boolean;
}

/**
 * The order in which the router tries a model's deployments. Every strategy returns all of them:
 * the order is also the failover order.
 * - priority: lowest priority number first; weighted random within one priority.
 * - weighted: weighted random over all (weight 0 only after the others).
 * - least-latency: lowest moving average first; deployments without data first, so they get measured.
 * - least-busy: fewest calls in flight first.
 * - lowest-cost: cheapest first, unpriced last.
 * Ties in the last three are broken by priority, then by a weighted draw.
 */
export function orderDeployments(
  strategy: RoutingStrategy,
  deployments: readonly Deployment[],
  inputs: OrderingInputs,
): Deployment[] {
  // Most models have one deployment: nothing to order, and no draw or maps to build on every call.
  if (deployments.length === 1) return [deployments[0]!];
  const drawn = weightedShuffle(deployments, inputs.random);
  const drawRank = new Map(drawn.map((deployment, index) => [deployment.id, index]));
  const byScore = (score: (deployment: Deployment) => number) =>
    [...deployments].sort(
      (left, right) =>
        score(left) - score(right) ||
        left.priority - right.priority ||
        drawRank.get(left.id)! - drawRank.get(right.id)!,
    );
  switch (strategy) {
    case 'weighted':
      return drawn;
    case 'least-latency':
      return byScore((deployment) => {
        const stats = inputs.stats?.get(deployment.id);
        const latency = inputs.stream ? (stats?.timeToFirstTokenMs ?? stats?.latencyMs) : stats?.latencyMs;
        return latency ?? -1;
      });
    case 'least-busy':
      return byScore((deployment) => inputs.stats?.get(deployment.id)?.inFlight ?? 0);
    case 'lowest-cost':
      return byScore((deployment) => inputs.priceOf?.(deployment) ?? Number.POSITIVE_INFINITY);
    case 'priority':
    default:
      return [...deployments].sort(
        (left, right) => left.priority - right.priority || drawRank.get(left.id)! - drawRank.get(right.id)!,
      );
  }
}

/** Repeated weighted draws without replacement: P(first = d) = weight(d) / Σ weights. */
export function weightedShuffle(deployments: readonly Deployment[], random: () => number): Deployment[] {
  const remaining = deployments.filter((deployment) => deployment.weight > 0);
  const zeroWeight = deployments.filter((deployment) => deployment.weight <= 0);
  const order: Deployment[] = [];
  while (remaining.length > 0) {
    const total = remaining.reduce((sum, deployment) => sum + deployment.weight, 0);
    let point = random() * total;
    let index = 0;
    while (index < remaining.length - 1 && point >= remaining[index]!.weight) {
      point -= remaining[index]!.weight;
      index += 1;
    }
    order.push(remaining.splice(index, 1)[0]!);
  }
  return [...order, ...zeroWeight];
}
