import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startFakeUpstream, type FakeReply, type FakeUpstream } from '../fakes/fake-upstream.js';
import { adminRequest, startGateway, type RunningGateway } from '../helpers/start-gateway.js';
import { tempDirectory } from '../helpers/test-databases.js';

/**
 * What a client gets, and what it is charged, when an OpenAI-compatible upstream answers in the
 * odd ways real servers do: streams without usage or broken midway, bodies that are no answer,
 * plain JSON to a stream request, its own name for the model.
 */

const UPSTREAM_MODEL = 'meta-llama/Llama-3.1-8B-Instruct';
const USAGE = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };

const chunk = (delta: Record<string, unknown>, finish: string | null = null, model = UPSTREAM_MODEL) =>
  JSON.stringify({ id: 'chatcmpl-upstream', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [{ index: 0, delta, finish_reason: finish }] });
const sse = (...events: string[]): FakeReply => ({
  status: 200,
  headers: { 'content-type': 'text/event-stream' },
  chunks: events.map((event) => `data: ${event}\n\n`),
});
const contentEvents = (model = UPSTREAM_MODEL) => [chunk({ role: 'assistant', content: '' }, null, model), chunk({ content: 'Hello there, ' }, null, model), chunk({ content: 'general Kenobi' }, null, model)];
const usageEvent = (model = UPSTREAM_MODEL) => JSON.stringify({ id: 'chatcmpl-upstream', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [], usage: USAGE });
const completion = (model = UPSTREAM_MODEL) => ({
  id: 'chatcmpl-upstream',
  object: 'chat.completion',
  created: 1_700_000_000,
  model,
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there, general Kenobi' }, finish_reason: 'stop' }],
  usage: USAGE,
});

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  trailers: Record<string, string | undefined>;
}

/** A POST read to its end with node:http, which (unlike fetch) exposes the HTTP trailers. */
function post(running: RunningGateway, key: string, path: string, body: Record<string, unknown>): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(`${running.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (piece: string) => (text += piece));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text, trailers: response.trailers }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(JSON.stringify(body));
  });
}

/** The `data:` events of an SSE answer: parsed JSON, and the literal [DONE]. */
function eventsOf(text: string): unknown[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => block.slice(6))
    .map((data) => (data === '[DONE]' ? data : JSON.parse(data)));
}

describe('OpenAI-compatible upstream: odd answers, what the client gets and what it is charged', () => {
  let upstream: FakeUpstream;
  let running: RunningGateway;
  const replies: FakeReply[] = [];

  before(async () => {
    upstream = await startFakeUpstream(() => replies.shift() ?? { status: 200, body: completion() });
    const configFile = join(tempDirectory(), 'gw.yaml');
    const deployment = (upstreamModel: string, pricing: string, priority = 0) => [
      '      - provider: openai-compatible',
      `        upstream_model: ${upstreamModel}`,
      `        base_url: ${upstream.baseUrl}/v1`,
      `        priority: ${priority}`,
      `        pricing: ${pricing}`,
    ];
    writeFileSync(
      configFile,
      [
        'models:',
        '  - id: llama',
        '    owned_by: meta',
        '    deployments:',
        ...deployment(UPSTREAM_MODEL, '{ inputPerMillion: "1.00", outputPerMillion: "2.00" }'),
        '  - id: llama-embed',
        '    owned_by: meta',
        '    deployments:',
        ...deployment('BAAI/bge-large-en-v1.5', '{ inputPerMillion: "0.10" }'),
        '  - id: llama-two-prices',
        '    owned_by: meta',
        '    deployments:',
        ...deployment('second', '{ inputPerMillion: "3.00", outputPerMillion: "4.00" }', 1),
        ...deployment('first', '{ inputPerMillion: "1.00", outputPerMillion: "2.00" }', 0),
      ].join('\n'),
    );
    running = await startGateway({ config: { configFile } });
  });
  after(async () => {
    await running?.close();
    await upstream?.close();
  });

  async function tenant(): Promise<string> {
    const org = await adminRequest(running, 'POST', '/api/admin/orgs', { name: `compatible ${randomUUID()}` });
    assert.equal(org.status, 200, JSON.stringify(org.body));
    const topUp = await adminRequest(running, 'POST', `/api/admin/orgs/${org.body.id}/credits`, { amount_usd: '10.00', note: 'test' });
    assert.equal(topUp.status, 200, JSON.stringify(topUp.body));
    const key = await adminRequest(running, 'POST', '/api/admin/keys', { org_id: org.body.id, name: 'compatible key' });
    assert.equal(key.status, 200, JSON.stringify(key.body));
    return key.body.key;
  }

  async function history(key: string): Promise<Array<{ request_id: string; units: Record<string, unknown>; cost_usd: string }>> {
    const response = await fetch(`${running.url}/api/credits/history?limit=50`, { headers: { authorization: `Bearer ${key}` } });
    return ((await response.json()) as { data: Array<{ request_id: string; units: Record<string, unknown>; cost_usd: string }> }).data;
  }

  const chatBody = (extra: Record<string, unknown> = {}) => ({ model: 'llama', messages: [{ role: 'user', content: `say hello ${randomUUID()}` }], ...extra });

  test('a stream without usage is charged from its counted text, marked estimated, and its trailer carries the cost', async () => {
    const key = await tenant();
    replies.push(sse(...contentEvents(), chunk({}, 'stop'), '[DONE]'));
    const answer = await post(running, key, '/v1/chat/completions', chatBody({ stream: true }));
    assert.equal(answer.status, 200);
    assert.equal(eventsOf(answer.text).at(-1), '[DONE]');
    const [entry] = await history(key);
    assert.ok(entry, 'a ledger entry is recorded');
    assert.equal(entry.request_id, answer.headers['x-gw-request-id']);
    assert.equal(entry.units.estimated, true);
    assert.ok(Number(entry.units.outputTokens) > 0, JSON.stringify(entry.units));
    assert.equal(answer.trailers['x-gw-request-cost'], entry.cost_usd);
    assert.ok(Number(entry.cost_usd) > 0);
  });

  test('a stream that fails midway after content is charged for the content', async () => {
    const key = await tenant();
    replies.push(sse(...contentEvents(), JSON.stringify({ error: { message: 'the model crashed', type: 'server_error' } })));
    const answer = await post(running, key, '/v1/chat/completions', chatBody({ stream: true }));
    assert.equal(answer.status, 200);
    const events = eventsOf(answer.text);
    assert.ok((events.at(-1) as { error?: unknown }).error, 'the stream ends with the error event');
    const [entry] = await history(key);
    assert.ok(entry, 'a ledger entry is recorded');
    assert.equal(entry.units.estimated, true);
    assert.ok(Number(entry.units.outputTokens) > 0);
  });

  test('a streamed cache hit costs 0.000000000, in gw_cost_usd and in the trailer', async () => {
    const key = await tenant();
    const body = chatBody({ stream: true, stream_options: { include_usage: true } });
    replies.push(sse(...contentEvents(), chunk({}, 'stop'), usageEvent(), '[DONE]'));
    const miss = await post(running, key, '/v1/chat/completions', body);
    assert.equal(miss.headers['x-gw-cache'], 'miss');
    assert.match(miss.trailers['x-gw-request-cost'] ?? '', /^0\.\d{9}$/);

    const hit = await post(running, key, '/v1/chat/completions', body);
    assert.equal(hit.headers['x-gw-cache'], 'hit');
    assert.equal(hit.headers.trailer, 'x-gw-request-cost');
    const usageChunk = eventsOf(hit.text).find((event) => typeof event === 'object' && (event as { usage?: unknown }).usage) as { gw_cost_usd?: string };
    assert.ok(usageChunk, 'the usage chunk is replayed');
    assert.equal(usageChunk.gw_cost_usd, '0.000000000');
    assert.equal(hit.trailers['x-gw-request-cost'], '0.000000000');

    const withoutUsage = await post(running, key, '/v1/chat/completions', { ...body, stream_options: undefined });
    assert.equal(withoutUsage.headers['x-gw-cache'], 'hit');
    assert.ok(!eventsOf(withoutUsage.text).some((event) => typeof event === 'object' && (event as { usage?: unknown }).usage));
    assert.equal(withoutUsage.trailers['x-gw-request-cost'], '0.000000000');
    assert.equal(upstream.requests.length > 0, true);
  });

  test('the price list shows the price a deployment-priced model is charged at', async () => {
    const key = await tenant();
    const response = await fetch(`${running.url}/api/models/pricing`, { headers: { authorization: `Bearer ${key}` } });
    const list = (await response.json()) as { data: Array<{ model: string; priced: boolean; pricing: Record<string, string> | null; deployment_pricing?: unknown[] }> };
    const llama = list.data.find((entry) => entry.model === 'llama')!;
    assert.equal(llama.priced, true);
    assert.equal(llama.pricing?.inputPerMillion, '1.00');
    assert.equal(llama.pricing?.outputPerMillion, '2.00');
    assert.equal(llama.deployment_pricing, undefined);
    const twoPrices = list.data.find((entry) => entry.model === 'llama-two-prices')!;
    assert.equal(twoPrices.priced, true);
    assert.equal(twoPrices.pricing?.inputPerMillion, '1.00', 'the primary (lowest priority number) deployment');
    assert.deepEqual(
      twoPrices.deployment_pricing?.map((price) => (price as { inputPerMillion: string }).inputPerMillion),
      ['1.00', '3.00'],
    );
  });

  test('answers name the public model, keeping the upstream id and created: chat, stream, embeddings', async () => {
    const key = await tenant();
    const plain = await post(running, key, '/v1/chat/completions', chatBody({ gw_cache: false }));
    assert.equal(plain.status, 200, plain.text);
    const body = JSON.parse(plain.text);
    assert.deepEqual([body.model, body.id, body.created], ['llama', 'chatcmpl-upstream', 1_700_000_000]);

    replies.push(sse(...contentEvents(), chunk({}, 'stop'), usageEvent(), '[DONE]'));
    const streamed = await post(running, key, '/v1/chat/completions', chatBody({ stream: true, stream_options: { include_usage: true }, gw_cache: false }));
    const chunks = eventsOf(streamed.text).filter((event) => event !== '[DONE]') as Array<{ model: string; id: string }>;
    assert.ok(chunks.length >= 5);
    assert.ok(chunks.every((event) => event.model === 'llama' && event.id === 'chatcmpl-upstream'), streamed.text);

    replies.push({ status: 200, body: { object: 'list', model: 'BAAI/bge-large-en-v1.5', data: [{ object: 'embedding', index: 0, embedding: [0.5] }], usage: { prompt_tokens: 2, total_tokens: 2 } } });
    const embedding = await post(running, key, '/v1/embeddings', { model: 'llama-embed', input: `x ${randomUUID()}` });
    assert.equal(JSON.parse(embedding.text).model, 'llama-embed');
  });

  test('a 200 answer that is HTML or not an answer object is a 502 and charges nothing', async () => {
    const key = await tenant();
    for (const reply of [
      { status: 200, headers: { 'content-type': 'text/html' }, body: Buffer.from('<html>oops</html>') },
      { status: 200, body: [1, 2] },
    ] satisfies FakeReply[]) {
      // The router may try again: every attempt gets the same bad answer.
      for (let attempt = 0; attempt < 5; attempt++) replies.push(reply);
      const answer = await post(running, key, '/v1/chat/completions', chatBody());
      replies.length = 0;
      assert.equal(answer.status, 502, answer.text);
      assert.equal(JSON.parse(answer.text).error.code, 'upstream_bad_response');
      assert.equal(answer.headers['x-gw-request-cost'], undefined);
    }
    assert.deepEqual(await history(key), []);
  });

  test('a stream request answered with plain JSON reaches the client as a stream, metered as one', async () => {
    const key = await tenant();
    replies.push({ status: 200, body: completion() });
    const answer = await post(running, key, '/v1/chat/completions', chatBody({ stream: true, stream_options: { include_usage: true } }));
    assert.equal(answer.status, 200);
    assert.match(String(answer.headers['content-type']), /^text\/event-stream/);
    const events = eventsOf(answer.text);
    assert.equal(events.at(-1), '[DONE]');
    const chunks = events.slice(0, -1) as Array<{ object: string; model: string; choices: Array<{ delta: { role?: string; content?: string }; finish_reason: string | null }>; usage?: unknown; gw_cost_usd?: string }>;
    assert.ok(chunks.every((event) => event.object === 'chat.completion.chunk' && event.model === 'llama'));
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: 'Hello there, general Kenobi' });
    assert.equal(chunks[1].choices[0].finish_reason, 'stop');
    assert.deepEqual(chunks[2].usage, USAGE);
    assert.match(chunks[2].gw_cost_usd ?? '', /^0\.\d{9}$/);
    assert.equal(answer.trailers['x-gw-request-cost'], chunks[2].gw_cost_usd);
    const [entry] = await history(key);
    assert.equal(entry.cost_usd, chunks[2].gw_cost_usd);
    assert.equal(entry.units.estimated, undefined);

    replies.push({ status: 200, body: completion() });
    const withoutUsage = eventsOf((await post(running, key, '/v1/chat/completions', chatBody({ stream: true }))).text);
    assert.equal(withoutUsage.length, 3, 'role+content, finish, [DONE]: the usage chunk only when asked for');
  });
});
