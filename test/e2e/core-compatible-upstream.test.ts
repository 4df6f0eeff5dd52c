import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startGateway, type RunningGateway } from '../helpers/start-gateway.js';
import { tempDirectory } from '../helpers/test-databases.js';
import { FAKE_UPSTREAM_MARKER, startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fakes/fake-openai-upstream.js';

describe('OpenAI-compatible upstream: what the gateway forwards and passes back', () => {
  let upstream: FakeOpenAIUpstream;
  let running: RunningGateway;
  let client: OpenAI;

  before(async () => {
    upstream = await startFakeOpenAIUpstream();
    const configFile = join(tempDirectory(), 'gw.yaml');
    writeFileSync(
      configFile,
      [
        'models:',
        '  - id: gpt-4o-mini',
        '    owned_by: openai',
        '    deployments:',
        '      - provider: openai-compatible',
        '        upstream_model: gpt-4o-mini-2024-07-18',
        `        base_url: ${upstream.baseUrl}`,
        '        api_key_env: FAKE_UPSTREAM_KEY',
        '        pricing: { inputPerMillion: "0.15", cachedInputPerMillion: "0.075", outputPerMillion: "0.60" }',
        '  - id: text-embedding-3-small',
        '    owned_by: openai',
        '    deployments:',
        '      - provider: openai-compatible',
        '        upstream_model: text-embedding-3-small',
        `        base_url: ${upstream.baseUrl}`,
        '        api_key_env: FAKE_UPSTREAM_KEY',
        '        pricing: { inputPerMillion: "0.02" }',
      ].join('\n'),
    );
    running = await startGateway({ config: { configFile }, environment: { FAKE_UPSTREAM_KEY: 'upstream-secret-key' } });
    client = new OpenAI({ apiKey: running.apiKey, baseURL: running.baseURL, maxRetries: 0 });
  });
  after(async () => {
    await running?.close();
    await upstream?.close();
  });

  test('forwards the body with the upstream model and key, unknown fields kept, gw_* stripped; answer passed through', async () => {
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      logit_bias: { '50256': -100 },
      // @ts-expect-error extra fields as real clients send them
      some_vendor_field: { keep: true },
      gw_cache: false,
    });
    assert.match(completion.choices[0].message.content ?? '', new RegExp(FAKE_UPSTREAM_MARKER));
    const forwarded = upstream.received.at(-1)!;
    assert.equal(forwarded.path, '/v1/chat/completions');
    assert.equal(forwarded.headers.authorization, 'Bearer upstream-secret-key');
    assert.equal(forwarded.body.model, 'gpt-4o-mini-2024-07-18');
    assert.deepEqual(forwarded.body.logit_bias, { '50256': -100 });
    assert.deepEqual(forwarded.body.some_vendor_field, { keep: true });
    assert.ok(!('gw_cache' in forwarded.body), 'gw_* fields never reach the upstream');
    assert.ok(!JSON.stringify(forwarded.headers).includes(running.apiKey), 'the virtual key is never forwarded');
  });

  test('streams chunk by chunk, always asking the upstream for usage', async () => {
    upstream.chunkDelayMs = 150;
    const started = Date.now();
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'stream this' }], stream: true });
    let firstContentAt = 0;
    let text = '';
    let sawUsage = false;
    for await (const chunk of stream) {
      const piece = chunk.choices[0]?.delta?.content;
      if (piece && !firstContentAt) firstContentAt = Date.now();
      text += piece ?? '';
      if (chunk.usage) sawUsage = true;
    }
    const finishedAt = Date.now();
    upstream.chunkDelayMs = 0;
    assert.match(text, new RegExp(FAKE_UPSTREAM_MARKER));
    assert.equal(upstream.received.at(-1)!.body.stream_options.include_usage, true);
    assert.equal(sawUsage, false, 'the usage chunk the client did not ask for is stripped');
    // The first token arrived well before the upstream finished (3 × 150 ms of delays): no buffering.
    assert.ok(finishedAt - firstContentAt >= 250, `first content ${firstContentAt - started} ms, end ${finishedAt - started} ms`);
  });

  test('embeddings and completions pass through', async () => {
    const embedding = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b'] });
    assert.deepEqual(embedding.data.map((entry) => entry.index), [0, 1]);
    assert.equal(upstream.received.at(-1)!.path, '/v1/embeddings');
  });

  test('upstream errors map to the spec statuses with our error body', async () => {
    upstream.script.push({ status: 400, body: { error: { message: 'bad thing with sk-abcdefghijklmnop', type: 'invalid_request_error', code: 'bad' } } });
    await assert.rejects(
      // A fresh prompt: a cached answer to an earlier one would never reach the scripted failure.
      client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'fail this one' }] }),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError);
        assert.ok(!(error as Error).message.includes('sk-abcdefghijklmnop'), 'upstream secrets are redacted');
        return true;
      },
    );
  });
});
