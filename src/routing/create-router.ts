import { GatewayError, isGatewayError } from '../errors/gateway-error.js';
import { isPromise } from '../lib/awaitable.js';
import type { EventBus } from '../lib/event-bus.js';
import type { GatewayCall, Next, Outcome } from '../pipeline/stage.js';
import { OPERATION_PATHS } from '../protocol/endpoints.js';
import { withoutGwExtras } from '../protocol/gw-extras.js';
import type { Provider } from '../providers/provider.js';
import { fallbackApplies, isDeploymentFault } from './attempt-error.js';
import { blendedPrice } from './blended-price.js';
import type { Deployment, ModelRoute } from './catalog-types.js';
import type { CircuitBreaker } from './circuit-breaker.js';
import type { HealthStore } from './health-store.js';
import type { ModelCatalog } from './model-catalog.js';
import { orderDeployments } from './order-deployments.js';
import { backoffDelayMs, DEFAULT_RETRY_POLICY, retryAfterMs, type RetryPolicy } from './retry-policy.js';
import { createSystemClock, type RouterClock } from './router-clock.js';
import { readDeploymentHealth, type DeploymentHealth } from './read-deployment-health.js';
import { cancelledError, runAttempt, type AttemptContext } from './run-attempt.js';
import type { DeploymentCapacity } from './deployment-capacity.js';
import { tapStream } from '../lib/tap-stream.js';
import { usageTotals, type Usage } from '../protocol/usage.js';

export interface ProviderRegistry {
  get(providerId: string): Provider | undefined;
}

export interface RouterLogger {
  warn(object: Record<string, unknown>, message: string): void;
}

export interface RouterDependencies {
  catalog: ModelCatalog;
  providers: ProviderRegistry;
  breaker: CircuitBreaker;
  health: HealthStore;
  eventBus: EventBus;
  clock?: RouterClock;
  /** Uniform in [0, 1): weighted draws and backoff jitter. */
  random?: () => number;
  logger?: RouterLogger;
  retryPolicy?: Partial<RetryPolicy>;
  /** Rank for lowest-cost; defaults to input + output token price of the deployment, else of the model. */
  priceOf?: (deployment: Deployment, model: ModelRoute) => number | undefined;
  /** The request's time cap, counted from GatewayCall.startedAt; per-attempt timeouts never exceed what is left. */
  requestTimeoutMs?: number;
  /** Per-deployment RPM/TPM capacity; a deployment at capacity is skipped like one whose circuit is open. */
  capacity?: DeploymentCapacity;
}

export interface Router {
  /** The terminal `next` of the pipeline. */
  route: Next;
  health(): Promise<DeploymentHealth[]>;
}

/** Bookkeeping of one routed call across deployments and fallback models. */
interface RouteProgress {
  attempts: number;
  startedAt: number;
  requestedModel: string;
}

/**
 * Resolves the model, tries its deployments in strategy order with retries (retry-policy.ts), then
 * its fallback models, and records which deployment answered (`x-gw-route`). docs/routing.md has
 * the rules and the status table.
 */
export function createRouter(dependencies: RouterDependencies): Router {
  const clock = dependencies.clock ?? createSystemClock();
  const random = dependencies.random ?? Math.random;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...dependencies.retryPolicy };
  const priceOf = dependencies.priceOf ?? ((deployment, model) => blendedPrice(deployment.pricing ?? model.pricing));
  const attemptContext: AttemptContext = {
    breaker: dependencies.breaker,
    health: dependencies.health,
    clock,
    logger: dependencies.logger,
    onStreamFailure: (call, error) => reportFailure(call, error),
  };

  const reportFailure = (call: GatewayCall, error: GatewayError) => {
    call.record.errorCode = error.code;
    dependencies.eventBus.publish({
      kind: 'llm.error',
      orgId: call.auth.org.id,
      severity: 'HIGH',
      title: `Model call failed: ${call.model}`,
      message: `${call.model} failed with ${error.code} after ${call.record.attempts ?? 0} attempt(s): ${error.message}`,
      details: {
        model: call.model,
        request_id: call.requestId,
        key_alias: call.auth.key.alias,
        org_id: call.auth.org.id,
        error_code: error.code,
        ...(error.provider ? { provider: error.provider } : {}),
      },
      occurredAt: Date.now(),
    });
  };

  const remainingMs = (call: GatewayCall) =>
    dependencies.requestTimeoutMs === undefined
      ? Number.POSITIVE_INFINITY
      : call.startedAt + dependencies.requestTimeoutMs - clock.now();

  async function tryModel(model: ModelRoute, call: GatewayCall, progress: RouteProgress): Promise<Outcome> {
    const usable = usableDeployments(model, call);
    if (usable.length === 0) {
      const enabled = model.deployments.filter((deployment) => deployment.enabled);
      if (enabled.some((deployment) => dependencies.providers.get(deployment.provider) !== undefined)) {
        throw new GatewayError('unsupported_model', `The model ${model.id} does not support ${OPERATION_PATHS[call.operation]}.`, {
          param: 'model',
        });
      }
      throw new GatewayError('upstream_unavailable', `No provider is available for the model ${model.id}.`);
    }
    // One deployment (most models) has nothing to order by: no stats to read for it.
    const stats = usable.length > 1 && needsStats(model) ? await readStats(usable) : undefined;
    let pending = orderDeployments(model.strategy, usable, {
      random,
      stats,
      stream: call.stream,
      priceOf: (deployment) => priceOf(deployment, model),
    }).map((deployment) => ({ deployment, retryAfterMs: undefined as number | undefined }));
    let lastError: GatewayError | undefined;

    for (let round = 0; round <= policy.maxRetries && pending.length > 0; round += 1) {
      const retry: typeof pending = [];
      for (const { deployment, retryAfterMs: askedWaitMs } of pending) {
        if (round > 0) {
          const waitMs = Math.max(backoffDelayMs(round, policy, random), askedWaitMs ?? 0);
          const elapsedMs = clock.now() - progress.startedAt;
          if (elapsedMs + waitMs > policy.maxElapsedMs || waitMs >= remainingMs(call)) continue;
          await clock.sleep(waitMs, call.signal).catch(() => {
            throw cancelledError(call);
          });
        }
        if (remainingMs(call) <= 0) throw lastError ?? new GatewayError('upstream_timeout', 'The request ran out of time.');
        let admitted = dependencies.capacity ? dependencies.capacity.admit(deployment, clock.now()) : true;
        if (isPromise(admitted)) admitted = await admitted;
        if (!admitted) {
          lastError = new GatewayError('upstream_rate_limited', `Every deployment of the model ${model.id} is at its configured capacity; retry shortly.`, {
            details: { retry_after_seconds: 1 },
          });
          continue;
        }
        const provider = dependencies.providers.get(deployment.provider)!;
        let permission = provider.inProcess ? 'allowed' : dependencies.breaker.acquire(deployment);
        if (isPromise(permission)) permission = await permission;
        if (permission === 'denied') continue;
        progress.attempts += 1;
        call.record.attempts = progress.attempts;
        try {
          const outcome = await runAttempt(attemptContext, {
            call,
            deployment,
            provider,
            target: dependencies.catalog.target(deployment.id) ?? fallbackTarget(deployment),
            remainingMs: remainingMs(call),
            countsFailure: round === 0 || permission === 'probe',
          });
          markServed(call, deployment, progress, model);
          return dependencies.capacity?.recordTokens && deployment.tpm ? countTokens(outcome, deployment) : outcome;
        } catch (error) {
          if (call.signal.aborted) throw cancelledError(call);
          const failure = isGatewayError(error) ? error : new GatewayError('internal_error', 'Routing failed.', { cause: error });
          lastError = failure;
          call.record.deploymentId = deployment.id;
          call.record.provider = deployment.provider;
          if (!isDeploymentFault(failure)) throw failure;
          const askedMs = retryAfterMs(failure);
          if (failure.retryable && (askedMs === undefined || askedMs <= policy.maxRetryAfterMs)) {
            retry.push({ deployment, retryAfterMs: askedMs });
          }
        }
      }
      pending = retry;
    }
    throw (
      lastError ??
      new GatewayError('upstream_unavailable', `Every deployment of the model ${model.id} is unavailable; retry later.`)
    );
  }

  /** The model's enabled deployments whose provider serves the call's operation, in catalog order (one loop, no closures: this runs on every call). */
  function usableDeployments(model: ModelRoute, call: GatewayCall): Deployment[] {
    const usable: Deployment[] = [];
    for (const deployment of model.deployments) {
      if (deployment.enabled && dependencies.providers.get(deployment.provider)?.operations.has(call.operation)) usable.push(deployment);
    }
    return usable;
  }

  /** Feeds the tokens a call used into its deployment's TPM capacity. */
  function countTokens(outcome: Outcome, deployment: Deployment): Outcome {
    const record = (usage: Usage | undefined) => {
      if (!usage) return;
      const totals = usageTotals(usage);
      void dependencies.capacity!.recordTokens(deployment, totals.promptTokens + totals.completionTokens, clock.now());
    };
    if (outcome.kind !== 'stream') {
      record(outcome.usage);
      return outcome;
    }
    return { kind: 'stream', events: tapStream(outcome.events, { onItem: (event) => void record(event.usage) }) };
  }

  async function readStats(deployments: Deployment[]) {
    try {
      return await dependencies.health.read(deployments.map((deployment) => deployment.id));
    } catch (error) {
      dependencies.logger?.warn({ error: (error as Error).message }, 'deployment health store unavailable');
      return undefined;
    }
  }

  async function route(call: GatewayCall): Promise<Outcome> {
    const model = dependencies.catalog.get(call.model);
    if (!model) throw new GatewayError('model_not_found', `The model ${call.model} does not exist.`, { param: 'model' });
    const progress: RouteProgress = { attempts: 0, startedAt: clock.now(), requestedModel: model.id };
    const request = withoutGwExtras(call.request);
    // Most calls carry no gw_* field: the call goes on as it is, without a copy.
    const forwarded: GatewayCall = request === call.request ? call : { ...call, request };
    let failure: GatewayError;
    try {
      return await tryModel(model, forwarded, progress);
    } catch (error) {
      failure = error as GatewayError;
    }
    const tried = new Set([model.id]);
    for (const fallback of model.fallbacks) {
      if (call.signal.aborted || !isGatewayError(failure)) break;
      if (tried.has(fallback.model) || !fallbackApplies(failure, fallback.on)) continue;
      if (clock.now() - progress.startedAt >= policy.maxElapsedMs) break;
      const fallbackModel = dependencies.catalog.get(fallback.model);
      if (!fallbackModel) {
        dependencies.logger?.warn({ model: model.id, fallback: fallback.model }, 'fallback model is not in the catalog');
        continue;
      }
      tried.add(fallbackModel.id);
      const fallbackCall: GatewayCall = {
        ...forwarded,
        model: fallbackModel.id,
        request: { ...forwarded.request, model: fallbackModel.id },
      };
      try {
        return await tryModel(fallbackModel, fallbackCall, progress);
      } catch (error) {
        // A fallback that cannot serve this operation at all says nothing; keep the primary's error.
        if (!(isGatewayError(error) && error.code === 'unsupported_model')) failure = error as GatewayError;
      }
    }
    const final = isGatewayError(failure) ? failure : new GatewayError('internal_error', 'Routing failed.', { cause: failure });
    const clientLeft = call.signal.aborted && !isGatewayError(call.signal.reason);
    if (!clientLeft) reportFailure(call, final);
    else call.record.errorCode = final.code;
    throw final;
  }

  return {
    route,
    health: () => readDeploymentHealth(dependencies.catalog, dependencies.breaker, dependencies.health),
  };
}

function needsStats(model: ModelRoute): boolean {
  return model.strategy === 'least-latency' || model.strategy === 'least-busy';
}

/** `x-gw-route: <deploymentId>;attempts=<n>[;fallback=<model id>]` (docs/routing.md). */
function markServed(call: GatewayCall, deployment: Deployment, progress: RouteProgress, model: ModelRoute): void {
  call.record.deploymentId = deployment.id;
  call.record.provider = deployment.provider;
  call.record.attempts = progress.attempts;
  const fallback = model.id === progress.requestedModel ? '' : `;fallback=${model.id}`;
  call.record.headers['x-gw-route'] = `${deployment.id};attempts=${progress.attempts}${fallback}`;
}

function fallbackTarget(deployment: Deployment) {
  return {
    deploymentId: deployment.id,
    provider: deployment.provider,
    upstreamModel: deployment.upstreamModel,
    ...(deployment.baseUrl ? { baseUrl: deployment.baseUrl } : {}),
    settings: deployment.settings,
    timeouts: deployment.timeouts,
  };
}
