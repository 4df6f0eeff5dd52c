import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testTarget } from '../../../test/fakes/fixture-files.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { CallAbort } from '../../lib/call-signal.js';
import type { GatewayCall, Outcome } from '../../pipeline/stage.js';
import { createHttpProvider } from '../http/create-http-provider.js';
import type { UpstreamClient } from '../http/upstream-client.js';
import { findCompatiblePreset } from '../openai/presets.js';
import { createCompatibleAdapter } from './compatible-adapter.js';

/** The OpenAI preset's provider in front of an upstream that answers every call with `body`. */
async function answerTo(body: string, contentType = 'application/json'): Promise<Outcome> {
  const client: UpstreamClient = {
    send: () => Promise.reject(new Error('no streams here')),
    sendBuffered: async () => ({ statusCode: 200, headers: { 'content-type': contentType }, body: Buffer.from(body) }),
    close: async () => {},
  };
  const provider = createHttpProvider(createCompatibleAdapter(findCompatiblePreset('openai')!), client);
  const call = {
    requestId: 'req-1',
    operation: 'chat',
    model: 'gpt-public',
    request: { model: 'gpt-public', messages: [{ role: 'user', content: 'hi' }] },
    stream: false,
  } as unknown as GatewayCall;
  return provider.invoke({ call, target: testTarget({ provider: 'openai', upstreamModel: 'gpt-4o' }), signal: new CallAbort().signal });
}

const ANSWER = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'a "usage": {"prompt_tokens": 1} in the text' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 42, completion_tokens: 38, total_tokens: 80, prompt_tokens_details: { cached_tokens: 2 } },
};

test('an answer read whole is forwarded as its bytes and metered from its usage', async () => {
  const text = JSON.stringify(ANSWER, null, 1);
  const outcome = await answerTo(text);
  assert.equal(outcome.kind, 'json');
  if (outcome.kind !== 'json') return;
  assert.equal(outcome.raw?.toString('utf8'), text);
  assert.deepEqual(outcome.usage, { inputTokens: 40, cachedInputTokens: 2, outputTokens: 38 });
  assert.deepEqual(outcome.body, ANSWER);
});

test('an answer without usage is forwarded with none', async () => {
  const outcome = await answerTo(JSON.stringify({ ...ANSWER, usage: undefined }));
  assert.equal(outcome.kind === 'json' && outcome.usage, undefined);
});

test('an answer that is not a JSON object is a 502', async () => {
  for (const text of ['<html>definitely not json', '"just a string"', '{"usage":{"prompt_tokens":1}', '{"id":"x",,"usage":{}}']) {
    await assert.rejects(answerTo(text), (error: unknown) => error instanceof GatewayError && error.code === 'upstream_bad_response', text);
  }
});
