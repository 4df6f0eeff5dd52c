import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startFakeCohere } from '../fakes/fake-cohere.js';
import type { FakeUpstream } from '../fakes/fake-upstream.js';
import { assertCostHeader, assertErrorBody, startProviderGateway, type ProviderGateway } from './providers-gateway.js';

const UPSTREAM_KEY = 'co-e2e-upstream-secret-0123456789abcdefghijklmn';

describe('Cohere v2 upstream: chat, embed and rerank', () => {
  let fake: FakeUpstream;
  let gateway: ProviderGateway;

  before(async () => {
    fake = await startFakeCohere();
    const routed = (id: string, upstreamModel: string) => ({ id, provider: 'cohere', upstreamModel, baseUrl: fake.baseUrl, apiKeyEnv: 'COHERE_KEY' });
    gateway = await startProviderGateway(
      [
        routed('command', 'command-a-03-2025'),
        routed('cohere-embed', 'embed-v4.0'),
        routed('cohere-rerank', 'rerank-v3.5'),
        routed('command-limited', 'command-a-03-2025'),
      ],
      { COHERE_KEY: UPSTREAM_KEY },
    );
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  test('chat through the SDK: v2 messages with the system turn, max_tokens, bearer key; billed usage back', async () => {
    const { data: completion, response } = await gateway.client.chat.completions
      .create({
        model: 'command',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'hello cohere' },
        ],
        max_tokens: 50,
      })
      .withResponse();
    assert.ok(assertCostHeader(response.headers) > 0);
    assert.equal(completion.choices[0].message.content, 'Echo: hello cohere');
    assert.equal(completion.choices[0].finish_reason, 'stop');
    assert.equal(completion.usage?.prompt_tokens, 9);
    assert.equal(completion.usage?.completion_tokens, 4);
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.url, '/v2/chat');
    assert.equal(sent.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
    const body = sent.json as Record<string, any>;
    assert.equal(body.model, 'command-a-03-2025');
    assert.equal(body.max_tokens, 50);
    assert.deepEqual(body.messages[0], { role: 'system', content: 'Be brief.' });
    assert.equal(body.messages[1].role, 'user');
  });

  test('chat stream through the SDK', async () => {
    const stream = await gateway.client.chat.completions.create({
      model: 'command',
      messages: [{ role: 'user', content: 'stream from cohere' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let content = '';
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(content, 'Echo: stream from cohere');
    assert.equal(finish, 'stop');
    assert.equal(usage?.completion_tokens, 4);
    assert.equal((fake.requests.at(-1)!.json as { stream?: boolean }).stream, true);
  });

  test('embeddings through the SDK: base64 by default, decoded; float on request; input type and order', async () => {
    const { data: embedded, response } = await gateway.client.embeddings.create({ model: 'cohere-embed', input: ['one', 'three'] }).withResponse();
    assertCostHeader(response.headers);
    assert.deepEqual(
      embedded.data.map((entry) => [entry.index, entry.embedding]),
      [
        [0, [3, 1, 0]],
        [1, [5, 1, 0]],
      ],
    );
    assert.equal(embedded.usage?.prompt_tokens, 4, 'billed input tokens from meta.billed_units');
    const body = fake.requests.at(-1)!.json as Record<string, any>;
    assert.equal(fake.requests.at(-1)!.url, '/v2/embed');
    assert.deepEqual(body.texts, ['one', 'three']);
    assert.equal(body.input_type, 'search_document');
    assert.deepEqual(body.embedding_types, ['float']);

    const floats = await gateway.client.embeddings.create({ model: 'cohere-embed', input: 'ab', encoding_format: 'float' });
    assert.deepEqual(floats.data[0].embedding, [2, 1, 0]);
  });

  test('rerank over HTTP: most relevant first, top_n, search units', async () => {
    const documents = ['Carson City is the capital of Nevada.', 'The capital of France is Paris.', 'Paris: capital of France.'];
    const reranked = await gateway.post('/rerank', { model: 'cohere-rerank', query: 'capital of France', documents, top_n: 2 });
    assert.equal(reranked.status, 200, JSON.stringify(reranked.json));
    assertCostHeader(reranked.headers);
    assert.equal(reranked.json.results.length, 2);
    assert.deepEqual(
      reranked.json.results.map((result: { index: number }) => result.index),
      [1, 2],
    );
    const scores = reranked.json.results.map((result: { relevance_score: number }) => result.relevance_score);
    assert.ok(scores[0] >= scores[1], 'sorted most relevant first');
    assert.equal(reranked.json.meta.billed_units.search_units, 1);
    const body = fake.requests.at(-1)!.json as Record<string, any>;
    assert.equal(fake.requests.at(-1)!.url, '/v2/rerank');
    assert.equal(body.model, 'rerank-v3.5');
    assert.equal(body.top_n, 2);
    assert.deepEqual(body.documents, documents);
  });

  test('429 stays 429 after retries; an invalid-token 498 is a gateway credential fault (502); no key leaks', async () => {
    for (let index = 0; index < 3; index++) {
      fake.failNext({ status: 429, headers: { 'retry-after': '0' }, body: { id: 'e', message: `trial key ${UPSTREAM_KEY} limited` } });
    }
    const limited = await gateway.post('/chat/completions', { model: 'command-limited', messages: [{ role: 'user', content: 'hi' }] });
    assertErrorBody(limited.json, 429, limited.status, [UPSTREAM_KEY]);
    assert.equal(limited.json.error.code, 'upstream_rate_limited');

    fake.failNext({ status: 498, body: { id: 'e', message: `invalid api token ${UPSTREAM_KEY}` } });
    const invalid = await gateway.post('/rerank', { model: 'cohere-rerank', query: 'q', documents: ['d'] });
    assertErrorBody(invalid.json, 502, invalid.status, [UPSTREAM_KEY]);
    assert.equal(invalid.json.error.code, 'upstream_authentication');
  });
});
