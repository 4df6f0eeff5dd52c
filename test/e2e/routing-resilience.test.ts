import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { GatewayEvent } from '../../src/lib/event-bus.js';
import { adminRequest, startGateway, type RunningGateway } from '../helpers/start-gateway.js';
import { tempDirectory } from '../helpers/test-databases.js';
import { startFlakyUpstream, type FlakyUpstream } from '../fakes/flaky-upstream.js';

/**
 * Routing rules through the real app and the openai SDK (docs/routing.md). Every scenario has its
 * own model and upstreams so circuits and statistics of one never affect another.
 */
describe('routing: retries, failover, fallbacks, circuits and status mapping', () => {
  const upstreams: Record<string, FlakyUpstream> = {};
  const names = ['retry', 'pairA', 'pairB', 'streamA', 'streamB', 'stall', 'solo', 'limited', 'backup', 'circuitA', 'circuitB', 'status'];
  let running: RunningGateway;
  let client: OpenAI;
  const events: GatewayEvent[] = [];

  const deployment = (name: string, priority = 0, totalMs = 3000) =>
    [
      `      - id: ${name}`,
      '        provider: openai-compatible',
      `        upstream_model: ${name}-upstream`,
      `        base_url: ${upstreams[name]!.baseUrl}`,
      '        api_key: sk-upstream',
      `        priority: ${priority}`,
      `        timeouts: { first_byte_ms: 400, total_ms: ${totalMs} }`,
      '        pricing: { inputPerMillion: "0.1", outputPerMillion: "0.2" }',
    ].join('\n');

  before(async () => {
    for (const name of names) upstreams[name] = await startFlakyUpstream(name);
    const configFile = join(tempDirectory(), 'gw.yaml');
    writeFileSync(
      configFile,
      [
        'routing:',
        '  retries: { max_retries: 2, base_delay_ms: 20, max_delay_ms: 100, max_retry_after_ms: 5000 }',
        '  circuit: { consecutive_failures: 3, cool_down_ms: 400 }',
        'models:',
        '  - id: m-retry',
        '    pricing: { inputPerMillion: "0.1", outputPerMillion: "0.2" }',
        '    deployments:',
        deployment('retry'),
        '  - id: m-pair',
        '    pricing: { inputPerMillion: "0.1", outputPerMillion: "0.2" }',
        '    deployments:',
        deployment('pairA', 0),
        deployment('pairB', 1),
        '  - id: m-stream',
        '    pricing: { inputPerMillion: "0.1", outputPerMillion: "0.2" }',
        '    deployments:',
        deployment('streamA', 0),
        deployment('streamB', 1),
        '  - id: m-stall',
        '    pricing: { inputPerMillion: "0.1", outputPerMillion: "0.2" }',
        '    deployments:',
        deployment('stall', 0, 600),
        '  - id: m-solo',
        '    pricing: { inputPerMillion: "0.1", outputPerMillion: "0.2" }',
        '    deployments:',
        deployment('solo'),
        '  - id: m-limited',
        '    pricing: { inputPerMillion: "0.1", outputPerMillion: "0.2" }',
        '    fallbacks: [{ model: m-backup, on: [rate_limited] }]',
        '    deployments:',
        deployment('limited'),
        '  - id: m-backup',
        '    pricing: { inputPerMillion: "0.1", outputPerMillion: "0.2" }',
        '    deployments:',
        deployment('backup'),
        '  - id: m-circuit',
        '    pricing: { inputPerMillion: "0.1", outputPerMillion: "0.2" }',
        '    deployments:',
        deployment('circuitA', 0),
        deployment('circuitB', 1),
        '  - id: m-status',
        '    pricing: { inputPerMillion: "0.1", outputPerMillion: "0.2" }',
        '    deployments:',
        deployment('status'),
      ].join('\n'),
    );
    // Enterprise limits: the tests fire calls faster than tier 1's 10 per second.
    running = await startGateway({ config: { configFile, bootstrapTier: 'enterprise' } });
    running.gateway.services.events.subscribe((event) => events.push(event));
    client = new OpenAI({ apiKey: running.apiKey, baseURL: running.baseURL, maxRetries: 0 });
  });
  after(async () => {
    await running?.close();
    await Promise.all(Object.values(upstreams).map((upstream) => upstream.close()));
  });

  // A different prompt every call, so the response cache never answers in the upstream's place.
  let counter = 0;
  const fresh = () => [{ role: 'user' as const, content: `hi ${++counter}` }];

  const ask = (model: string) =>
    client.chat.completions.create({ model, messages: fresh() }).withResponse();

  test('retries a failing deployment with backoff, then succeeds', async () => {
    upstreams.retry!.script({ kind: 'status', status: 503 }, { kind: 'status', status: 500 });
    const { data, response } = await ask('m-retry');
    assert.equal(data.choices[0]!.message.content, 'from retry');
    assert.equal(upstreams.retry!.hits(), 3);
    assert.equal(response.headers.get('x-gw-route'), 'retry;attempts=3');
  });

  test('honours Retry-After before retrying a 429', async () => {
    const start = upstreams.retry!.hits();
    upstreams.retry!.script({ kind: 'status', status: 429, headers: { 'retry-after': '1' } });
    const { data } = await ask('m-retry');
    assert.equal(data.choices[0]!.message.content, 'from retry');
    const [first, second] = upstreams.retry!.arrivals.slice(start);
    // A lower bound only: the router must have waited the second the upstream asked for.
    assert.ok(second! - first! >= 950, `retried after ${second! - first!} ms`);
  });

  test('one deployment failing in each way: the client sees only successes', async () => {
    const failures = [
      { kind: 'status', status: 500 },
      { kind: 'status', status: 503 },
      { kind: 'status', status: 429, headers: { 'retry-after': '0' } },
      { kind: 'hang' },
      { kind: 'garbage' },
      { kind: 'drop' },
    ] as const;
    for (const failure of failures) {
      const beforeB = upstreams.pairB!.hits();
      upstreams.pairA!.script(failure);
      const { data, response } = await ask('m-pair');
      assert.equal(data.choices[0]!.message.content, 'from pairB', `${failure.kind} fails over`);
      assert.equal(response.headers.get('x-gw-route'), 'pairB;attempts=2');
      assert.equal(upstreams.pairB!.hits(), beforeB + 1);
      // A healthy answer between failures keeps pairA's circuit closed.
      const healthy = await ask('m-pair');
      assert.equal(healthy.data.choices[0]!.message.content, 'from pairA');
    }
  });

  test('a stream failing before its first byte fails over with no duplicate bytes', async () => {
    for (const failure of [{ kind: 'drop-mid-stream', after: 0 }, { kind: 'hang' }, { kind: 'status', status: 502 }] as const) {
      upstreams.streamA!.script(failure);
      const stream = await client.chat.completions.create({ model: 'm-stream', messages: fresh(), stream: true });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      assert.equal(text, 'from streamB', `${failure.kind}: exactly one answer's bytes`);
      const healthy = await client.chat.completions.create({ model: 'm-stream', messages: fresh(), stream: true });
      let healthyText = '';
      for await (const chunk of healthy) healthyText += chunk.choices[0]?.delta?.content ?? '';
      assert.equal(healthyText, 'from streamA');
    }
  });

  test('a stream broken after bytes reached the client ends with an error event, never [DONE], never retried', async () => {
    const beforeA = upstreams.streamA!.hits();
    const beforeB = upstreams.streamB!.hits();
    upstreams.streamA!.script({ kind: 'drop-mid-stream', after: 3 });
    const response = await fetch(`${running.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${running.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm-stream', messages: fresh(), stream: true }),
    });
    assert.equal(response.status, 200);
    const text = await response.text();
    assert.ok(!text.includes('[DONE]'), text);
    const dataLines = text.split('\n').filter((line) => line.startsWith('data: '));
    const last = JSON.parse(dataLines.at(-1)!.slice(6));
    assert.ok(last.error, text);
    assert.equal(typeof last.error.code, 'string');
    assert.ok(text.includes('"from"'), 'the first bytes were sent');
    assert.equal(upstreams.streamA!.hits(), beforeA + 1);
    assert.equal(upstreams.streamB!.hits(), beforeB);

    // The SDK raises on that error event.
    upstreams.streamA!.script({ kind: 'drop-mid-stream', after: 3 });
    const stream = await client.chat.completions.create({ model: 'm-stream', messages: fresh(), stream: true });
    await assert.rejects(async () => {
      for await (const _chunk of stream) {
        // drain
      }
    });
  });

  test('a stream that stalls after bytes reached the client is ended by the gateway timers with an error event', async () => {
    upstreams.stall!.script({ kind: 'stall-mid-stream', after: 2 });
    // The client gives up after 5 s; the deployment's silence limit (400 ms between chunks) or its
    // total (600 ms) must end the stream first, through the HTTP client's own abort handling.
    const response = await fetch(`${running.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${running.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm-stall', messages: fresh(), stream: true }),
      signal: AbortSignal.timeout(5_000),
    });
    assert.equal(response.status, 200);
    const text = await response.text();
    assert.ok(!text.includes('[DONE]'), text);
    const dataLines = text.split('\n').filter((line) => line.startsWith('data: '));
    const last = JSON.parse(dataLines.at(-1)!.slice(6));
    assert.equal(last.error?.code, 'upstream_timeout', text);
  });

  test('a rate-limited model falls back to its rate_limited fallback', async () => {
    upstreams.limited!.setDefault({ kind: 'status', status: 429 });
    const { data, response } = await ask('m-limited');
    assert.equal(data.choices[0]!.message.content, 'from backup');
    assert.equal(upstreams.limited!.hits(), 3);
    assert.equal(response.headers.get('x-gw-route'), 'backup;attempts=4;fallback=m-backup');
  });

  test('a circuit opens after consecutive failures, is skipped, then recovers through a probe', async () => {
    upstreams.circuitA!.setDefault({ kind: 'status', status: 503 });
    for (let index = 0; index < 3; index += 1) {
      const { data } = await ask('m-circuit');
      assert.equal(data.choices[0]!.message.content, 'from circuitB');
    }
    assert.equal(upstreams.circuitA!.hits(), 3);
    const skipped = await ask('m-circuit');
    assert.equal(skipped.response.headers.get('x-gw-route'), 'circuitB;attempts=1');
    assert.equal(upstreams.circuitA!.hits(), 3, 'open circuit: not called');

    const health = await adminRequest(running, 'GET', '/api/admin/deployments/health');
    assert.equal(health.status, 200);
    const row = health.body.data.find((item: { deployment_id: string }) => item.deployment_id === 'circuitA');
    assert.equal(row.circuit, 'open');
    assert.equal(row.circuit_reason, 'upstream_unavailable');
    const outage = events.find((event) => event.kind === 'provider.outage' && event.details.deployment_id === 'circuitA');
    assert.ok(outage);
    assert.deepEqual(outage.details, { model: 'm-circuit', deployment_id: 'circuitA', provider: 'openai-compatible', reason: 'upstream_unavailable' });

    upstreams.circuitA!.setDefault({ kind: 'ok' });
    await new Promise((resolve) => setTimeout(resolve, 450)); // the configured cool-down
    const probe = await ask('m-circuit');
    assert.equal(probe.data.choices[0]!.message.content, 'from circuitA');
    const after = await adminRequest(running, 'GET', '/api/admin/deployments/health');
    assert.equal(after.body.data.find((item: { deployment_id: string }) => item.deployment_id === 'circuitA').circuit, 'closed');
  });

  test('status mapping when everything is down', async () => {
    const expectStatus = async (status: number, code: string) => {
      await assert.rejects(ask('m-status'), (error: InstanceType<typeof OpenAI.APIError>) => {
        assert.equal(error.status, status);
        assert.equal((error.error as { code?: string }).code ?? error.code, code);
        return true;
      });
    };
    const upstream = upstreams.status!;
    // 408, 502 and 504 count against the circuit (3 attempts each open it): each case after the first
    // waits the cool-down, so its first attempt is the half-open probe and reaches the upstream.
    const coolDown = () => new Promise((resolve) => setTimeout(resolve, 450));
    upstream.setDefault({ kind: 'status', status: 400, body: { error: { message: 'bad thing', type: 'invalid_request_error' } } });
    await expectStatus(400, 'upstream_bad_request');
    upstream.setDefault({ kind: 'status', status: 408 });
    await expectStatus(408, 'upstream_request_timeout');
    await coolDown();
    upstream.setDefault({ kind: 'garbage' });
    await expectStatus(502, 'upstream_bad_response');
    await coolDown();
    upstream.setDefault({ kind: 'hang' });
    await expectStatus(504, 'upstream_timeout');
    // The failed probe reopened the circuit: every deployment unavailable, the upstream not called.
    const hits = upstream.hits();
    await expectStatus(503, 'upstream_unavailable');
    assert.equal(upstream.hits(), hits);
    await coolDown();
    upstream.setDefault({ kind: 'status', status: 503 });
    await expectStatus(503, 'upstream_unavailable');
    const llmErrors = events.filter((event) => event.kind === 'llm.error' && event.details.model === 'm-status');
    assert.ok(llmErrors.length >= 5);
    assert.equal(llmErrors[0]!.details.org_id, running.orgId);
  });
});
