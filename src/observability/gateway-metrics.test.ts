import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Histogram, Registry } from 'prom-client';
import { createGatewayMetrics } from './gateway-metrics.js';
import type { RequestListener, RequestLogEntry, RequestRecorder } from './request-recorder.js';
import { SeriesCounter, SeriesHistogram } from './series-metrics.js';

function recorderStub() {
  const listeners: RequestListener[] = [];
  const recorder: RequestRecorder = {
    record: (entry) => listeners.forEach((listener) => listener(entry)),
    onRecord(listener) {
      listeners.push(listener);
      return () => listeners.splice(listeners.indexOf(listener), 1);
    },
    flush: async () => {},
    close: async () => {},
    pending: 0,
  };
  return recorder;
}

function entry(overrides: Partial<RequestLogEntry>): RequestLogEntry {
  return {
    request_id: 'req',
    org_id: 'org',
    key_id: 'key',
    key_alias: 'alias',
    team_id: null,
    user: null,
    model: 'gpt-4o-mini',
    operation: 'chat',
    status: 200,
    error_code: null,
    latency_ms: 3,
    prompt_tokens: 10,
    completion_tokens: 5,
    cost_nanos: 1_500,
    deployment_id: 'openai-main',
    attempts: 1,
    cache: null,
    stream: 0,
    details: null,
    created_at: 0,
    ...overrides,
  } as RequestLogEntry;
}

/** The lines of one metric family (its HELP, TYPE and samples) in an exposition text. */
function family(text: string, name: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name}_`) || line.startsWith(`${name} `) || line.startsWith(`# HELP ${name} `) || line.startsWith(`# TYPE ${name} `));
}

test('series metrics expose exactly what prom-client Counter and Histogram expose for the same updates', async () => {
  const ours = new Registry();
  const theirs = new Registry();
  const bounds = [0.001, 0.01, 0.1, 1];
  const counter = new SeriesCounter(ours, 'demo_total', 'Demo counter');
  const histogram = new SeriesHistogram(ours, 'demo_seconds', 'Demo histogram', bounds);
  const referenceCounter = new Counter({ name: 'demo_total', help: 'Demo counter', labelNames: ['route', 'status'], registers: [theirs] });
  const referenceHistogram = new Histogram({ name: 'demo_seconds', help: 'Demo histogram', labelNames: ['route', 'status'], buckets: bounds, registers: [theirs] });
  const observations: Array<[string, string, number]> = [
    ['chat', '200', 0.0004],
    ['chat', '200', 0.001], // on a bound: counted in that bucket (le is "less or equal")
    ['chat', '200', 0.05],
    ['chat', '500', 7],
    ['embed"\\\n', '200', 0.2], // a label value that needs escaping
  ];
  for (const [route, status, seconds] of observations) {
    const key = `${route}\n${status}`;
    const labels = () => ({ route, status });
    counter.at(key, labels).value += 1;
    histogram.observe(histogram.at(key, labels), seconds);
    referenceCounter.inc({ route, status });
    referenceHistogram.observe({ route, status }, seconds);
  }
  assert.equal(await ours.metrics(), await theirs.metrics());
  // prom-client's histogram adds an empty `exemplar` to each bucket in its JSON form; nothing else differs.
  const withoutExemplars = (json: unknown) => JSON.parse(JSON.stringify(json, (key, value: unknown) => (key === 'exemplar' ? undefined : value))) as unknown;
  assert.deepEqual(withoutExemplars(await ours.getMetricsAsJSON()), withoutExemplars(await theirs.getMetricsAsJSON()));

  ours.resetMetrics();
  theirs.resetMetrics();
  assert.equal(await ours.metrics(), await theirs.metrics());
});

test('gateway metrics: calls, upstream calls, tokens, exact cost, cache, guardrail blocks and rate-limit rejections', async () => {
  const recorder = recorderStub();
  const metrics = createGatewayMetrics({ recorder, circuits: async () => [{ deploymentId: 'openai-main', provider: 'openai', state: 'open' }] });
  try {
    recorder.record(entry({ latency_ms: 250 }));
    recorder.record(entry({ latency_ms: 500, cost_nanos: 2_500, cache: 'miss' }));
    recorder.record(entry({ status: 429, error_code: 'rate_limit_exceeded', deployment_id: null, prompt_tokens: 0, completion_tokens: 0, cost_nanos: 0 }));
    recorder.record(entry({ status: 400, error_code: 'guardrail_blocked', deployment_id: null, prompt_tokens: 0, completion_tokens: 0, cost_nanos: 0 }));
    recorder.record(entry({ status: 502, deployment_id: 'openai-main', prompt_tokens: 0, completion_tokens: 0, cost_nanos: 0, latency_ms: 2_000 }));
    recorder.record(entry({ model: null, operation: 'moderation', cache: 'hit', deployment_id: null, prompt_tokens: 0, completion_tokens: 0, cost_nanos: 0 }));
    const text = await metrics.render();

    assert.deepEqual(family(text, 'gw_requests_total').slice(2), [
      'gw_requests_total{operation="chat",model="gpt-4o-mini",status="200"} 2',
      'gw_requests_total{operation="chat",model="gpt-4o-mini",status="429"} 1',
      'gw_requests_total{operation="chat",model="gpt-4o-mini",status="400"} 1',
      'gw_requests_total{operation="chat",model="gpt-4o-mini",status="502"} 1',
      'gw_requests_total{operation="moderation",model="",status="200"} 1',
    ]);
    const durations = family(text, 'gw_request_duration_seconds');
    assert.ok(durations.includes('gw_request_duration_seconds_bucket{le="0.1",operation="chat",model="gpt-4o-mini",status="200"} 0'));
    assert.ok(durations.includes('gw_request_duration_seconds_bucket{le="0.25",operation="chat",model="gpt-4o-mini",status="200"} 1'));
    assert.ok(durations.includes('gw_request_duration_seconds_bucket{le="0.5",operation="chat",model="gpt-4o-mini",status="200"} 2'));
    assert.ok(durations.includes('gw_request_duration_seconds_sum{operation="chat",model="gpt-4o-mini",status="200"} 0.75'));
    assert.ok(durations.includes('gw_request_duration_seconds_count{operation="chat",model="gpt-4o-mini",status="502"} 1'));
    assert.deepEqual(family(text, 'gw_upstream_requests_total').slice(2), [
      'gw_upstream_requests_total{deployment="openai-main",outcome="success"} 2',
      'gw_upstream_requests_total{deployment="openai-main",outcome="error"} 1',
    ]);
    assert.ok(family(text, 'gw_upstream_duration_seconds').includes('gw_upstream_duration_seconds_count{deployment="openai-main"} 2'));
    assert.deepEqual(family(text, 'gw_tokens_total').slice(2), [
      'gw_tokens_total{model="gpt-4o-mini",kind="prompt"} 20',
      'gw_tokens_total{model="gpt-4o-mini",kind="completion"} 10',
    ]);
    assert.deepEqual(family(text, 'gw_cost_usd_total').slice(2), ['gw_cost_usd_total{model="gpt-4o-mini"} 0.000004']);
    assert.deepEqual(family(text, 'gw_cache_lookups_total').slice(2), ['gw_cache_lookups_total{result="miss"} 1', 'gw_cache_lookups_total{result="hit"} 1']);
    assert.deepEqual(family(text, 'gw_guardrail_blocks_total').slice(2), ['gw_guardrail_blocks_total 1']);
    assert.deepEqual(family(text, 'gw_rate_limit_rejections_total').slice(2), ['gw_rate_limit_rejections_total{code="rate_limit_exceeded"} 1']);
    assert.deepEqual(family(text, 'gw_circuit_state').slice(2), ['gw_circuit_state{deployment="openai-main",provider="openai"} 2']);
    assert.match(text, /# TYPE gw_request_duration_seconds histogram/);
    assert.match(text, /# TYPE gw_tokens_total counter/);
  } finally {
    metrics.stop();
  }
});

test('gateway metrics: the unlabelled guardrail counter is exposed as 0 before any block', async () => {
  const metrics = createGatewayMetrics({ recorder: recorderStub(), circuits: async () => [] });
  try {
    assert.deepEqual(family(await metrics.render(), 'gw_guardrail_blocks_total').slice(2), ['gw_guardrail_blocks_total 0']);
  } finally {
    metrics.stop();
  }
});
