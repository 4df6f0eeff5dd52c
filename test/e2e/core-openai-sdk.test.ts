import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { APIError } from 'openai';
import { adminRequest, startGateway, type RunningGateway } from '../helpers/start-gateway.js';
import { TEST_DATABASES } from '../helpers/test-databases.js';

for (const database of TEST_DATABASES) {
  describe(`core gateway through the openai SDK (${database.name})`, { skip: database.skip }, () => {
    let running: RunningGateway;
    let client: OpenAI;

    before(async () => {
      running = await startGateway({ database: database.name });
      client = new OpenAI({ apiKey: running.apiKey, baseURL: running.baseURL, maxRetries: 0 });
    });
    after(async () => running?.close());

    test('non-streamed chat completion with gw headers', async () => {
      const { data, response } = await client.chat.completions
        .create({ model: 'local-chat', messages: [{ role: 'user', content: 'ping' }], max_tokens: 50 })
        .withResponse();
      assert.equal(data.object, 'chat.completion');
      assert.equal(data.model, 'local-chat');
      assert.match(data.choices[0].message.content ?? '', /ping/);
      assert.ok(data.usage && data.usage.total_tokens === data.usage.prompt_tokens + data.usage.completion_tokens);
      assert.match(response.headers.get('x-gw-request-id') ?? '', /^req_/);
      assert.ok(Number(response.headers.get('x-gw-latency-ms')) >= 0);
      assert.equal(response.headers.get('x-gw-org-id'), running.orgId);
      assert.match(response.headers.get('x-gw-key-alias') ?? '', /^sk-\.\.\.[A-Za-z0-9]{4}$/);
      assert.ok(running.apiKey.endsWith((response.headers.get('x-gw-key-alias') ?? '').slice(-4)));
    });

    test('streamed chat completion ends with [DONE] and honours include_usage', async () => {
      const stream = await client.chat.completions.create({
        model: 'local-chat',
        messages: [{ role: 'user', content: 'stream please' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let usage: OpenAI.CompletionUsage | undefined | null;
      let chunks = 0;
      for await (const chunk of stream) {
        chunks++;
        assert.equal(chunk.object, 'chat.completion.chunk');
        text += chunk.choices[0]?.delta?.content ?? '';
        if (chunk.usage) usage = chunk.usage;
      }
      assert.ok(chunks > 3, 'token-by-token chunks');
      assert.match(text, /stream please/);
      assert.ok(usage && usage.completion_tokens > 0);
    });

    test('stream without include_usage carries no usage chunk', async () => {
      const response = await fetch(`${running.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${running.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local-chat', stream: true, messages: [{ role: 'user', content: 'x' }] }),
      });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
      const body = await response.text();
      assert.ok(body.trimEnd().endsWith('data: [DONE]'));
      assert.ok(!body.includes('"usage"'), 'no usage chunk unless asked');
    });

    test('legacy completions default to 16 max tokens', async () => {
      const completion = await client.completions.create({ model: 'local-chat', prompt: 'Say something long '.repeat(10) });
      assert.equal(completion.object, 'text_completion');
      assert.ok((completion.usage?.completion_tokens ?? 99) <= 16);
      assert.equal(typeof completion.choices[0].text, 'string');
    });

    test('models list and retrieve; unknown model is 404', async () => {
      const list = await client.models.list();
      const ids = list.data.map((model) => model.id);
      assert.ok(ids.includes('local-chat'));
      for (const model of list.data) assert.equal(model.object, 'model');
      assert.ok(list.data.every((model) => !model.id.includes('local/')), 'no provider prefix');
      const one = await client.models.retrieve('local-chat');
      assert.equal(one.owned_by, 'local');
      await assert.rejects(client.models.retrieve('no-such-model'), (error: unknown) => error instanceof OpenAI.NotFoundError);
      const first = await fetch(`${running.baseURL}/models`, { headers: { authorization: `Bearer ${running.apiKey}` } });
      assert.equal(first.headers.get('x-gw-cache'), 'hit');
    });

    test('invalid requests raise BadRequestError with the spec error body', async () => {
      await assert.rejects(
        client.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'x' }], temperature: 3 }),
        (error: unknown) => error instanceof OpenAI.BadRequestError && (error as APIError).code === 'invalid_request',
      );
      await assert.rejects(
        client.chat.completions.create({ model: 'local-chat', messages: [] }),
        (error: unknown) => error instanceof OpenAI.BadRequestError,
      );
      await assert.rejects(
        client.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'x' }], user: 'u'.repeat(201) }),
        (error: unknown) => error instanceof OpenAI.BadRequestError && (error as APIError).param === 'user',
      );
      await assert.rejects(
        client.chat.completions.create({ model: 'unknown-model', messages: [{ role: 'user', content: 'x' }] }),
        (error: unknown) => error instanceof OpenAI.BadRequestError,
      );
    });

    test('wrong or missing key raises AuthenticationError (401 invalid_api_key)', async () => {
      const bad = new OpenAI({ apiKey: 'sk-gw-' + 'x'.repeat(40), baseURL: running.baseURL, maxRetries: 0 });
      await assert.rejects(bad.models.list(), (error: unknown) => {
        assert.ok(error instanceof OpenAI.AuthenticationError);
        assert.equal((error as APIError).code, 'invalid_api_key');
        assert.equal((error as APIError).type, 'authentication_error');
        return true;
      });
      const response = await fetch(`${running.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.equal(response.status, 401);
      const body = await response.json();
      assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
    });

    test('a key without access to the model raises PermissionDeniedError (403)', async () => {
      const created = await adminRequest(running, 'POST', '/api/admin/keys', {
        org_id: running.orgId,
        name: 'restricted',
        allowed_models: ['local-chat-mini'],
      });
      assert.equal(created.status, 200);
      const restricted = new OpenAI({ apiKey: created.body.key, baseURL: running.baseURL, maxRetries: 0 });
      await assert.rejects(
        restricted.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'x' }] }),
        (error: unknown) => error instanceof OpenAI.PermissionDeniedError,
      );
      const ok = await restricted.chat.completions.create({ model: 'local-chat-mini', messages: [{ role: 'user', content: 'x' }] });
      assert.equal(ok.model, 'local-chat-mini');
      const visible = (await restricted.models.list()).data.map((model) => model.id);
      assert.deepEqual(visible, ['local-chat-mini']);
    });

    test('a revoked key is rejected on the very next request', async () => {
      const created = await adminRequest(running, 'POST', '/api/admin/keys', { org_id: running.orgId, name: 'to revoke' });
      const key = new OpenAI({ apiKey: created.body.key, baseURL: running.baseURL, maxRetries: 0 });
      await key.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'x' }] });
      const revoked = await adminRequest(running, 'POST', `/api/admin/keys/${created.body.id}/revoke`);
      assert.equal(revoked.body.status, 'revoked');
      await assert.rejects(
        key.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'x' }] }),
        (error: unknown) => error instanceof OpenAI.AuthenticationError,
      );
      const listed = await adminRequest(running, 'GET', `/api/admin/keys?org_id=${running.orgId}`);
      assert.ok(listed.body.data.every((entry: Record<string, unknown>) => !('key' in entry) && !('key_hash' in entry)));
    });

    test('HTTP edge errors: unknown path, unsupported area, bad JSON, wrong content type, oversize body', async () => {
      const call = (path: string, init: RequestInit = {}) =>
        fetch(running.url + path, { ...init, headers: { authorization: `Bearer ${running.apiKey}`, ...(init.headers ?? {}) } });
      const unknown = await call('/v1/nothing-here');
      assert.equal(unknown.status, 404);
      assert.equal((await unknown.json()).error.code, 'not_found');
      for (const area of ['files', 'fine_tuning/jobs', 'batches', 'assistants', 'threads', 'vector_stores', 'uploads', 'containers', 'conversations', 'responses']) {
        const response = await call(`/v1/${area}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        assert.equal(response.status, 404, area);
        const body = await response.json();
        assert.equal(body.error.code, 'unsupported_endpoint');
        assert.match(body.error.message, /chat\/completions/);
      }
      const badJson = await call('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":' });
      assert.equal(badJson.status, 400);
      assert.equal((await badJson.json()).error.type, 'invalid_request_error');
      const wrongType = await call('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hi' });
      assert.equal(wrongType.status, 400);
      const charset = await call('/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'x' }] }),
      });
      assert.equal(charset.status, 200);
      const huge = await call('/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'x'.repeat(11 * 1024 * 1024) }] }),
      });
      assert.equal(huge.status, 413);
      assert.equal((await huge.json()).error.code, 'payload_too_large');
      const lower = await fetch(`${running.baseURL}/models`, { headers: { authorization: `bearer ${running.apiKey}` } });
      assert.equal(lower.status, 200, 'Bearer scheme is case-insensitive');
    });

    test('real-client shapes: tool round trip with null content, content parts, newer fields', async () => {
      const completion = await client.chat.completions.create({
        model: 'local-chat',
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: [{ type: 'text', text: 'weather?' }] },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'call_1', content: '{"temp":20}' },
        ],
        tools: [{ type: 'function', function: { name: 'get_weather', description: 'w', parameters: { type: 'object', properties: {} } } }],
        max_completion_tokens: 40,
        parallel_tool_calls: false,
        logprobs: false,
        metadata: { a: 'b' },
        store: false,
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
        reasoning_effort: 'low',
      } as OpenAI.ChatCompletionCreateParamsNonStreaming);
      assert.equal(completion.object, 'chat.completion');
    });

    test('OpenAPI document describes the routes', async () => {
      const response = await fetch(`${running.url}/openapi.json`);
      const document = await response.json();
      for (const path of ['/v1/chat/completions', '/v1/completions', '/v1/models', '/v1/embeddings', '/v1/rerank', '/v1/ocr']) {
        assert.ok(document.paths[path], path);
      }
    });
  });
}
