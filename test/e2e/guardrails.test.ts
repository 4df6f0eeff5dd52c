import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fakes/fake-openai-upstream.js';
import { adminRequest, startGateway, type RunningGateway } from '../helpers/start-gateway.js';
import { tempDirectory } from '../helpers/test-databases.js';
import { type HttpsReceiver, startHttpsReceiver } from './alerts-fixtures/https-receiver.js';
import { createTestCertificates, type TestCertificates } from './alerts-fixtures/test-certificates.js';

const CARD = '4111 1111 1111 1111';

/** Guardrails against a running gateway: what is checked (function calls, tool definitions), what a block costs, webhook outages. */
describe('guardrails end to end', () => {
  let upstream: FakeOpenAIUpstream;
  let certificates: TestCertificates;
  let policy: HttpsReceiver;
  /** What the policy webhook answers next, by path. */
  const policyAnswers = new Map<string, { status: number; body?: string }>();
  let running: RunningGateway;
  let orgId: string;
  let apiKey: string;

  before(async () => {
    upstream = await startFakeOpenAIUpstream();
    certificates = createTestCertificates();
    policy = await startHttpsReceiver(certificates, (request) => {
      const answer = policyAnswers.get(request.path) ?? { status: 200, body: '{"action":"allow"}' };
      return { ...answer, headers: { 'content-type': 'application/json' } };
    });
    const configFile = join(tempDirectory(), 'gw.yaml');
    writeFileSync(
      configFile,
      [
        'models:',
        '  - id: gpt-4o-mini',
        '    owned_by: openai',
        '    deployments:',
        '      - provider: openai-compatible',
        '        upstream_model: up-a',
        `        base_url: ${upstream.baseUrl}`,
        '        api_key_env: FAKE_UPSTREAM_KEY',
        '        pricing: { inputPerMillion: "0.15", outputPerMillion: "0.60" }',
      ].join('\n'),
    );
    running = await startGateway({
      config: { configFile, webhookAllowedHosts: [`127.0.0.1:${policy.port}`], webhookCaFile: certificates.caFile },
      environment: { FAKE_UPSTREAM_KEY: 'k' },
    });
    const org = await adminRequest(running, 'POST', '/api/admin/orgs', { name: `guardrails ${Math.random()}`, tier: 'enterprise' });
    assert.equal(org.status, 200, JSON.stringify(org.body));
    orgId = org.body.id;
    assert.equal((await adminRequest(running, 'POST', `/api/admin/orgs/${orgId}/credits`, { amount_usd: '10.00', note: 'test' })).status, 200);
    const key = await adminRequest(running, 'POST', '/api/admin/keys', { org_id: orgId, name: 'guardrails' });
    assert.equal(key.status, 200, JSON.stringify(key.body));
    apiKey = key.body.key;
  });
  after(async () => {
    await running?.close();
    await policy?.close();
    await upstream?.close();
    certificates?.remove();
  });

  const createGuardrail = async (body: Record<string, unknown>) => {
    const response = await adminRequest(running, 'POST', '/api/admin/guardrails', { org_id: orgId, enabled_by_default: false, ...body });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as { id: string; name: string };
  };
  const chat = async (body: Record<string, unknown>) => {
    const response = await fetch(`${running.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }], gw_cache: false, ...body }),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as any };
  };
  const asKey = async (path: string) => {
    const response = await fetch(running.url + path, { headers: { authorization: `Bearer ${apiKey}` } });
    return (await response.json()) as any;
  };

  test('pre-call: a card number inside assistant tool_calls arguments or a tool description is blocked before the upstream', async () => {
    const pii = await createGuardrail({ name: 'pii-block', kind: 'pii', action: 'block' });
    const before = upstream.received.length;
    const inArguments = await chat({
      gw_guardrail_ids: [pii.id],
      messages: [
        { role: 'user', content: 'pay the bill' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'pay', arguments: JSON.stringify({ card: CARD }) } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'paid' },
      ],
    });
    assert.equal(inArguments.status, 400, JSON.stringify(inArguments.body));
    assert.equal(inArguments.body.error.code, 'guardrail_blocked');
    const inTools = await chat({ gw_guardrail_ids: [pii.id], tools: [{ type: 'function', function: { name: 'pay', description: `pays with ${CARD}`, parameters: { type: 'object' } } }] });
    assert.equal(inTools.status, 400, JSON.stringify(inTools.body));
    assert.equal(inTools.body.error.code, 'guardrail_blocked');
    assert.equal(upstream.received.length, before, 'nothing blocked reached the upstream');
  });

  test('post-call: tool_calls arguments are checked, and a blocked answer is charged like any call', async () => {
    const pii = await createGuardrail({ name: 'pii-post-block', kind: 'pii', stage: 'post', action: 'block' });
    upstream.script.push({
      status: 200,
      body: {
        id: 'chatcmpl-tool',
        object: 'chat.completion',
        created: 1,
        model: 'up-a',
        choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'pay', arguments: JSON.stringify({ card: CARD }) } }] }, finish_reason: 'tool_calls' }],
        usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
      },
    });
    const blocked = await chat({ gw_guardrail_ids: [pii.id] });
    assert.equal(blocked.status, 400, JSON.stringify(blocked.body));
    assert.equal(blocked.body.error.code, 'guardrail_blocked');
    const requestId = blocked.headers.get('x-gw-request-id');
    assert.equal(blocked.headers.get('x-gw-request-cost'), '0.000005850');
    // 11 input tokens at 0.15 USD and 7 output tokens at 0.60 USD per million.
    const history = await asKey('/api/credits/history?limit=50');
    const entry = history.data.find((candidate: { request_id: string }) => candidate.request_id === requestId);
    assert.ok(entry, `the blocked call is in the history: ${JSON.stringify(history.data)}`);
    assert.equal(entry.cost_usd, '0.000005850');

    // A stream buffered for a post-call guardrail and blocked is charged too.
    const marker = await createGuardrail({ name: 'marker-post-block', kind: 'deny_list', stage: 'post', action: 'block', config: { terms: ['fake-openai-upstream'] } });
    const stream = await fetch(`${running.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'stream' }], stream: true, gw_cache: false, gw_guardrail_ids: [marker.id] }),
    });
    assert.equal(stream.status, 400);
    assert.equal(((await stream.json()) as any).error.code, 'guardrail_blocked');
    const streamHistory = await asKey('/api/credits/history?limit=50');
    const streamEntry = streamHistory.data.find((candidate: { request_id: string }) => candidate.request_id === stream.headers.get('x-gw-request-id'));
    assert.ok(streamEntry, 'the blocked stream is in the history');
    // The fake stream's usage: 11 input tokens of which 3 cached (at half price), 7 output tokens.
    assert.equal(streamEntry.cost_usd, '0.000005625');
  });

  test('webhook guardrail: the documented request body; an outage is 503 service_unavailable, not a logged block', async () => {
    const allowing = await createGuardrail({ name: 'policy-allow', kind: 'webhook', config: { url: policy.url('/allow'), headers: { 'x-policy-token': 't' } } });
    const allowed = await chat({ gw_guardrail_ids: [allowing.id], messages: [{ role: 'user', content: 'hi there' }] });
    assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
    const [sent] = await policy.waitFor(1, '/allow');
    assert.equal(sent.headers['x-policy-token'], 't');
    assert.deepEqual(JSON.parse(sent.raw.toString()), { guardrail: { id: allowing.id, name: 'policy-allow' }, stage: 'pre', texts: ['hi there'], input: 'hi there' });

    policyAnswers.set('/down', { status: 500, body: 'oops' });
    const failing = await createGuardrail({ name: 'policy-down', kind: 'webhook', config: { url: policy.url('/down') } });
    const before = upstream.received.length;
    const refused = await chat({ gw_guardrail_ids: [failing.id] });
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'service_unavailable');
    assert.equal(refused.body.error.type, 'service_unavailable');
    assert.equal(upstream.received.length, before, 'a request that could not be checked is not sent');
    const logs = await asKey('/gw/guardrail/logs?limit=100');
    assert.ok(!logs.data.some((entry: { guardrail_name: string }) => entry.guardrail_name === 'policy-down'), 'an outage is not logged as a block');

    const failingOpen = await createGuardrail({ name: 'policy-down-open', kind: 'webhook', config: { url: policy.url('/down'), fail_open: true } });
    assert.equal((await chat({ gw_guardrail_ids: [failingOpen.id] })).status, 200);
  });
});
