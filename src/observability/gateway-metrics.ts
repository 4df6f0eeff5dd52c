import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { RequestRecorder } from './request-recorder.js';
import { SeriesCounter, SeriesHistogram } from './series-metrics.js';

export interface CircuitReading {
  deploymentId: string;
  provider: string;
  state: string;
}

export interface GatewayMetrics {
  registry: Registry;
  /** Prometheus text exposition. */
  render(): Promise<string>;
  stop(): void;
}

const CIRCUIT_STATES: Record<string, number> = { closed: 0, half_open: 1, open: 2 };

/**
 * Prometheus metrics, fed from the request log as each call is recorded (no work added to the call
 * itself) plus process metrics (event-loop lag, GC, memory) and circuit states read at scrape time.
 */
export function createGatewayMetrics(options: { recorder: RequestRecorder; circuits: () => Promise<CircuitReading[]> }): GatewayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'gw_process_', eventLoopMonitoringPrecision: 20 });
  const requests = new SeriesCounter(registry, 'gw_requests_total', 'Requests by endpoint, model and status');
  const duration = new SeriesHistogram(
    registry,
    'gw_request_duration_seconds',
    'Gateway request latency (to the last byte) by endpoint, model and status',
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  );
  const deploymentCalls = new SeriesCounter(registry, 'gw_upstream_requests_total', 'Calls per deployment and outcome');
  const deploymentLatency = new SeriesHistogram(registry, 'gw_upstream_duration_seconds', 'Latency of calls served by each deployment', [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
  ]);
  const tokens = new SeriesCounter(registry, 'gw_tokens_total', 'Tokens by model and kind');
  // Counted in exact nano-dollars, exposed in USD.
  const cost = new SeriesCounter(registry, 'gw_cost_usd_total', 'Metered cost in USD by model', 1e9);
  const cache = new SeriesCounter(registry, 'gw_cache_lookups_total', 'Response cache lookups by result');
  // Unlabelled: exposed as 0 from the start, as a prom-client Counter without labels is.
  const guardrailBlocks = new SeriesCounter(registry, 'gw_guardrail_blocks_total', 'Requests blocked by a guardrail').at('', () => ({}));
  const rateLimited = new SeriesCounter(registry, 'gw_rate_limit_rejections_total', 'Requests rejected by rate limits, by code');
  const circuit = new Gauge({
    name: 'gw_circuit_state',
    help: 'Circuit state per deployment: 0 closed, 1 half-open, 2 open',
    labelNames: ['deployment', 'provider'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const reading of await options.circuits().catch(() => [])) {
        this.set({ deployment: reading.deploymentId, provider: reading.provider }, CIRCUIT_STATES[reading.state] ?? 0);
      }
    },
  });
  void circuit;

  const unsubscribe = options.recorder.onRecord((entry) => {
    const model = entry.model ?? '';
    const seconds = entry.latency_ms / 1000;
    // One key per (operation, model, status); the label objects are built only for a new series.
    const callKey = `${entry.operation}\n${model}\n${entry.status}`;
    const callLabels = () => ({ operation: entry.operation, model, status: String(entry.status) });
    requests.at(callKey, callLabels).value += 1;
    duration.observe(duration.at(callKey, callLabels), seconds);
    const deployment = entry.deployment_id;
    if (deployment) {
      const outcome = entry.status < 400 ? 'success' : 'error';
      deploymentCalls.at(`${deployment}\n${outcome}`, () => ({ deployment, outcome })).value += 1;
      if (entry.status < 400) deploymentLatency.observe(deploymentLatency.at(deployment, () => ({ deployment })), seconds);
    }
    if (entry.prompt_tokens) tokens.at(`${model}\nprompt`, () => ({ model, kind: 'prompt' })).value += entry.prompt_tokens;
    if (entry.completion_tokens) tokens.at(`${model}\ncompletion`, () => ({ model, kind: 'completion' })).value += entry.completion_tokens;
    if (entry.cost_nanos) cost.at(model, () => ({ model })).value += Number(entry.cost_nanos);
    const cacheResult = entry.cache;
    if (cacheResult === 'hit' || cacheResult === 'miss') cache.at(cacheResult, () => ({ result: cacheResult })).value += 1;
    const errorCode = entry.error_code;
    if (errorCode === 'guardrail_blocked') guardrailBlocks.value += 1;
    if (errorCode === 'rate_limit_exceeded' || errorCode === 'tpm_limit_exceeded') rateLimited.at(errorCode, () => ({ code: errorCode })).value += 1;
  });

  return {
    registry,
    render: () => registry.metrics(),
    stop: unsubscribe,
  };
}
