import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startFakeAzureOpenAI } from '../fakes/fake-azure-openai.js';
import type { FakeUpstream } from '../fakes/fake-upstream.js';
import { assertCostHeader, assertErrorBody, startProviderGateway, type ProviderGateway } from './providers-gateway.js';

// Azure keys are 32 hex digits with no telling prefix.
const UPSTREAM_KEY = '0f1e2d3c4b5a69788796a5b4c3d2e1f0';

describe('Azure OpenAI upstream: deployment path, api-version, api-key', () => {
  let fake: FakeUpstream;
  let gateway: ProviderGateway;

  before(async () => {
    fake = await startFakeAzureOpenAI();
    gateway = await startProviderGateway(
      [
        {
          id: 'azure-gpt-4o',
          provider: 'azure',
          upstreamModel: 'gpt-4o',
          baseUrl: fake.baseUrl,
          apiKeyEnv: 'AZURE_KEY',
          settings: { deployment: 'prod-gpt4o', apiVersion: '2024-10-21' },
        },
        { id: 'azure-default', provider: 'azure', upstreamModel: 'gpt-4o-mini', baseUrl: `${fake.baseUrl}/openai`, apiKeyEnv: 'AZURE_KEY' },
        { id: 'azure-broken', provider: 'azure', upstreamModel: 'gpt-4o', baseUrl: fake.baseUrl, apiKeyEnv: 'AZURE_KEY' },
      ],
      { AZURE_KEY: UPSTREAM_KEY },
    );
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  test('chat through the SDK goes to the deployment path with the api-version and the api-key header', async () => {
    const { data: completion, response } = await gateway.client.chat.completions
      .create({ model: 'azure-gpt-4o', messages: [{ role: 'user', content: 'hello azure' }], max_tokens: 20 })
      .withResponse();
    assert.ok(assertCostHeader(response.headers) > 0);
    assert.equal(completion.choices[0].message.content, 'Echo: hello azure');
    assert.equal(completion.usage?.total_tokens, 11);
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.url, '/openai/deployments/prod-gpt4o/chat/completions?api-version=2024-10-21');
    assert.equal(sent.headers['api-key'], UPSTREAM_KEY);
    assert.equal(sent.headers.authorization, undefined, 'Azure keys travel in api-key only');
    assert.equal((sent.json as { max_tokens?: number }).max_tokens, 20);

    await gateway.client.chat.completions.create({ model: 'azure-default', messages: [{ role: 'user', content: 'x' }] });
    assert.match(fake.requests.at(-1)!.url, /^\/openai\/deployments\/gpt-4o-mini\/chat\/completions\?api-version=\d{4}-\d{2}-\d{2}/, 'deployment defaults to the upstream model; a base ending in /openai is accepted');
  });

  test('stream through the SDK: the prompt_filter_results preamble is dropped, usage is asked for', async () => {
    const stream = await gateway.client.chat.completions.create({ model: 'azure-gpt-4o', messages: [{ role: 'user', content: 'stream from azure' }], stream: true });
    let content = '';
    let sawEmptyChoices = false;
    for await (const chunk of stream) {
      if (chunk.choices.length === 0) sawEmptyChoices = true;
      content += chunk.choices[0]?.delta.content ?? '';
    }
    assert.equal(content, 'Echo: stream from azure');
    assert.equal(sawEmptyChoices, false, 'neither the filter preamble nor the unrequested usage chunk reach the client');
    assert.equal((fake.requests.at(-1)!.json as { stream_options?: { include_usage?: boolean } }).stream_options?.include_usage, true);
  });

  test('legacy completions through the SDK, and the catalog lists the routed models', async () => {
    const { data: completion, response } = await gateway.client.completions
      .create({ model: 'azure-gpt-4o', prompt: 'Once upon a time', max_tokens: 3 })
      .withResponse();
    assertCostHeader(response.headers);
    assert.equal(completion.object, 'text_completion');
    assert.equal(completion.choices[0].text, ' continued: Once upon a time');
    assert.equal(completion.usage?.completion_tokens, 3);
    assert.equal(fake.requests.at(-1)!.url, '/openai/deployments/prod-gpt4o/completions?api-version=2024-10-21');

    const ids = [];
    for await (const model of gateway.client.models.list()) ids.push(model.id);
    for (const id of ['azure-gpt-4o', 'azure-default', 'azure-broken']) assert.ok(ids.includes(id), `${id} in ${ids.join(', ')}`);
    const one = await gateway.client.models.retrieve('azure-gpt-4o');
    assert.equal(one.object, 'model');
  });

  test('401 from Azure is our 502 upstream_authentication; a 400 echoing the key is redacted', async () => {
    fake.failNext({ status: 401, body: { error: { code: '401', message: `Access denied for key ${UPSTREAM_KEY}.` } } });
    const denied = await gateway.post('/chat/completions', { model: 'azure-broken', messages: [{ role: 'user', content: 'hi' }] });
    assertErrorBody(denied.json, 502, denied.status, [UPSTREAM_KEY]);
    assert.equal(denied.json.error.code, 'upstream_authentication');

    fake.failNext({ status: 400, body: { error: { code: 'BadRequest', message: `Bad request with key ${UPSTREAM_KEY} at ${fake.baseUrl}/openai` } } });
    const bad = await gateway.client.chat.completions.create({ model: 'azure-broken', messages: [{ role: 'user', content: 'hi' }] }).catch((caught: unknown) => caught);
    assert.ok(bad instanceof OpenAI.BadRequestError, String(bad));
    assertErrorBody({ error: bad.error }, 400, bad.status, [UPSTREAM_KEY, fake.baseUrl]);
  });
});
