import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RequestRecorder } from './request-recorder.js';

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
  const requests = new Counter({ name: 'gw_requests_total', help: 'Requests by endpoint, model and status', labelNames: ['operation', 'model', 'status'], registers: [registry] });
  const duration = new Histogram({
    name: 'gw_request_duration_seconds',
    help: 'Gateway request latency (to the last byte) by endpoint, model and status',
    labelNames: ['operation', 'model', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const deploymentCalls = new Counter({ name: 'gw_upstream_requests_total', help: 'Calls per deployment and outcome', labelNames: ['deployment', 'outcome'], registers: [registry] });
  const deploymentLatency = new Histogram({
    name: 'gw_upstream_duration_seconds',
    help: 'Latency of calls served by each deployment',
    labelNames: ['deployment'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const tokens = new Counter({ name: 'gw_tokens_total', help: 'Tokens by model and kind', labelNames: ['model', 'kind'], registers: [registry] });
  const cost = new Counter({ name: 'gw_cost_usd_total', help: 'Metered cost in USD by model', labelNames: ['model'], registers: [registry] });
  const cache = new Counter({ name: 'gw_cache_lookups_total', help: 'Response cache lookups by result', labelNames: ['result'], registers: [registry] });
  const guardrailBlocks = new Counter({ name: 'gw_guardrail_blocks_total', help: 'Requests blocked by a guardrail', registers: [registry] });
  const rateLimited = new Counter({ name: 'gw_rate_limit_rejections_total', help: 'Requests rejected by rate limits, by code', labelNames: ['code'], registers: [registry] });
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
    const labels = { operation: entry.operation, model: entry.model ?? '', status: String(entry.status) };
    requests.inc(labels);
    duration.observe(labels, entry.latency_ms / 1000);
    if (entry.deployment_id) {
      deploymentCalls.inc({ deployment: entry.deployment_id, outcome: entry.status < 400 ? 'success' : 'error' });
      if (entry.status < 400) deploymentLatency.observe({ deployment: entry.deployment_id }, entry.latency_ms / 1000);
    }
    if (entry.prompt_tokens) tokens.inc({ model: entry.model ?? '', kind: 'prompt' }, entry.prompt_tokens);
    if (entry.completion_tokens) tokens.inc({ model: entry.model ?? '', kind: 'completion' }, entry.completion_tokens);
    if (entry.cost_nanos) cost.inc({ model: entry.model ?? '' }, entry.cost_nanos / 1e9);
    if (entry.cache === 'hit' || entry.cache === 'miss') cache.inc({ result: entry.cache });
    if (entry.error_code === 'guardrail_blocked') guardrailBlocks.inc();
    if (entry.error_code === 'rate_limit_exceeded' || entry.error_code === 'tpm_limit_exceeded') rateLimited.inc({ code: entry.error_code });
  });

  return {
    registry,
    render: () => registry.metrics(),
    stop: unsubscribe,
  };
}
