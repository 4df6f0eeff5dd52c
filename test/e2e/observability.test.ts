import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/start-gateway.js';

describe('metrics, health, readiness and traces', () => {
  let running: RunningGateway;
  const spans: Array<{ name: string; attributes: Record<string, unknown> }> = [];
  let receiver: ReturnType<typeof createServer>;

  before(async () => {
    receiver = createServer(async (request, response) => {
      let text = '';
      for await (const chunk of request) text += chunk;
      if (request.url === '/v1/traces') {
        const body = JSON.parse(text);
        for (const resource of body.resourceSpans ?? []) {
          for (const scope of resource.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              const attributes: Record<string, unknown> = {};
              for (const attribute of span.attributes ?? []) attributes[attribute.key] = Object.values(attribute.value)[0];
              spans.push({ name: span.name, attributes });
            }
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    running = await startGateway({ config: { tracing: true } });
  });
  after(async () => {
    await running?.close();
    receiver?.closeAllConnections();
    receiver?.close();
  });

  test('healthz and readyz', async () => {
    assert.equal((await fetch(`${running.url}/healthz`)).status, 200);
    const ready = await fetch(`${running.url}/readyz`);
    assert.equal(ready.status, 200);
    assert.equal((await ready.json()).checks.database, true);
  });

  test('metrics need the master credential and count requests', async () => {
    await fetch(`${running.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${running.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'count me' }] }),
    });
    assert.equal((await fetch(`${running.url}/metrics`)).status, 401);
    assert.equal((await fetch(`${running.url}/metrics`, { headers: { authorization: `Bearer ${running.apiKey}` } })).status, 403);
    const metrics = await fetch(`${running.url}/metrics`, { headers: { authorization: `Bearer ${running.masterKey}` } });
    assert.equal(metrics.status, 200);
    const text = await metrics.text();
    assert.match(text, /gw_requests_total\{operation="chat",model="local-chat",status="200"\} [1-9]/);
    assert.match(text, /gw_request_duration_seconds_bucket/);
    assert.match(text, /gw_tokens_total/);
    assert.match(text, /gw_process_nodejs_eventloop_lag_seconds/);
    assert.match(text, /gw_circuit_state/);
  });

  test('traces: a span per upstream call with GenAI attributes', async () => {
    const response = await fetch(`${running.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${running.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'trace me' }], max_tokens: 20 }),
    });
    assert.equal(response.status, 200);
    for (let attempt = 0; attempt < 50 && !spans.some((span) => span.name === 'chat local-chat'); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const span = spans.find((candidate) => candidate.name === 'chat local-chat');
    assert.ok(span, `spans received: ${spans.map((candidate) => candidate.name).join(', ')}`);
    assert.equal(span.attributes['gen_ai.operation.name'], 'chat');
    assert.equal(span.attributes['gen_ai.request.model'], 'local-chat');
    assert.equal(span.attributes['gen_ai.system'], 'local');
    assert.ok(Number(span.attributes['gen_ai.usage.output_tokens']) > 0);
  });
});
