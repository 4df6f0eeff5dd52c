import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testContext, testTarget } from '../../../test/fakes/fixture-files.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { CallAbort } from '../../lib/call-signal.js';
import type { GatewayCall, Outcome, StreamEvent } from '../../pipeline/stage.js';
import { createHttpProvider } from '../http/create-http-provider.js';
import type { UpstreamBody, UpstreamClient } from '../http/upstream-client.js';
import { findCompatiblePreset } from '../openai/presets.js';
import { createCompatibleAdapter, createPassthroughStreamTranslator } from './compatible-adapter.js';

function bodyOf(text: string): UpstreamBody {
  let destroyed = false;
  return {
    async *[Symbol.asyncIterator]() {
      yield Buffer.from(text);
    },
    readAll: async () => Buffer.from(text),
    destroy: () => void (destroyed = true),
    get destroyed() {
      return destroyed;
    },
  };
}

/** The OpenAI preset's provider in front of an upstream that answers every call with `body`. */
async function answerTo(
  body: string,
  contentType = 'application/json',
  options: { operation?: 'chat' | 'completion' | 'embedding'; stream?: boolean; publicModel?: string } = {},
): Promise<Outcome> {
  const client: UpstreamClient = {
    send: async () => ({ statusCode: 200, headers: { 'content-type': contentType }, body: bodyOf(body) }),
    sendBuffered: async () => ({ statusCode: 200, headers: { 'content-type': contentType }, body: Buffer.from(body) }),
    close: async () => {},
  };
  const provider = createHttpProvider(createCompatibleAdapter(findCompatiblePreset('openai')!), client);
  const model = options.publicModel ?? 'gpt-public';
  const call = {
    requestId: 'req-1',
    operation: options.operation ?? 'chat',
    model,
    request: { model, messages: [{ role: 'user', content: 'hi' }] },
    stream: options.stream ?? false,
  } as unknown as GatewayCall;
  return provider.invoke({ call, target: testTarget({ provider: 'openai', upstreamModel: 'gpt-4o' }), signal: new CallAbort().signal });
}

const ANSWER = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  model: 'gpt-public',
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

const isBadResponse = (error: unknown) => error instanceof GatewayError && error.code === 'upstream_bad_response' && error.status === 502;

test('an answer that is not a JSON object is a 502', async () => {
  for (const text of ['<html>definitely not json', '"just a string"', '{"usage":{"prompt_tokens":1}', '{"id":"x",,"usage":{}}']) {
    await assert.rejects(answerTo(text), isBadResponse, text);
  }
});

// Labelled JSON, such bodies fail to parse; labelled otherwise they were kept as bytes, which passed as an "object".
test('a 200 answer that is not an OpenAI answer is a 502, whatever its content type', async () => {
  const cases: Array<[string, string]> = [
    ['<html>oops</html>', 'text/html'],
    ['<html>oops</html>', ''],
    ['[1,2]', 'application/json'],
    ['[1,2]', 'text/plain'],
    ['{"id":"x","usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}', 'application/json'],
    ['null', 'application/json'],
  ];
  for (const [text, contentType] of cases) {
    await assert.rejects(answerTo(text, contentType), isBadResponse, `${contentType}: ${text}`);
    // A stream request's answer not labelled JSON is read as SSE: one without events is a 502 at the router.
    if (contentType === 'application/json') await assert.rejects(answerTo(text, contentType, { stream: true }), isBadResponse, `stream: ${text}`);
  }
  await assert.rejects(answerTo('{"object":"list","model":"e"}', 'application/json', { operation: 'embedding' }), isBadResponse);
  await assert.rejects(answerTo('<html>oops</html>', 'text/html', { operation: 'embedding' }), isBadResponse);
});

test('an answer labelled as text but holding the JSON answer is served', async () => {
  const outcome = await answerTo(JSON.stringify(ANSWER), 'text/plain; charset=utf-8');
  assert.equal(outcome.kind, 'json');
  assert.deepEqual(outcome.kind === 'json' && outcome.usage, { inputTokens: 40, cachedInputTokens: 2, outputTokens: 38 });
});

test("the answer names the public model; its other bytes, id and created included, are the upstream's", async () => {
  const text = JSON.stringify({ ...ANSWER, model: 'meta-llama/Llama-3.1-8B-Instruct', created: 1720000000 }, null, 1);
  const outcome = await answerTo(text, 'application/json', { publicModel: 'llama' });
  assert.equal(outcome.kind, 'json');
  if (outcome.kind !== 'json') return;
  assert.equal(outcome.raw?.toString('utf8'), text.replace('"meta-llama/Llama-3.1-8B-Instruct"', '"llama"'));
  assert.deepEqual(outcome.body, { ...ANSWER, model: 'llama', created: 1720000000 });

  const embedding = await answerTo('{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1]}],"model":"bge-large-en-v1.5","usage":{"prompt_tokens":2,"total_tokens":2}}', 'application/json', {
    operation: 'embedding',
    publicModel: 'embed',
  });
  assert.equal(embedding.kind === 'json' && JSON.parse(embedding.raw!.toString('utf8')).model, 'embed');

  // "model" more than once: the parsed answer is sent re-encoded instead of spliced.
  const twice = await answerTo(JSON.stringify({ ...ANSWER, model: 'upstream-name', metadata: { model: 'x' } }), 'application/json', { publicModel: 'llama' });
  assert.equal(twice.kind === 'json' && twice.raw, undefined);
  assert.deepEqual(twice.kind === 'json' && (twice.body as { model: string; metadata: unknown }).model, 'llama');
});

test('an answer that already names the public model is forwarded as the very bytes received', async () => {
  const text = JSON.stringify(ANSWER);
  const outcome = await answerTo(text);
  assert.equal(outcome.kind === 'json' && outcome.raw?.toString('utf8'), text);
});

async function collect(outcome: Outcome): Promise<StreamEvent[]> {
  assert.equal(outcome.kind, 'stream');
  const events: StreamEvent[] = [];
  if (outcome.kind === 'stream') for await (const event of outcome.events) events.push(event);
  return events;
}

test('a stream request answered with plain JSON becomes a stream: role and content, finish, usage', async () => {
  const answer = { ...ANSWER, model: 'upstream-name', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }] };
  const events = await collect(await answerTo(JSON.stringify(answer), 'application/json', { stream: true }));
  assert.equal(events.length, 3);
  assert.deepEqual(events[0].chunk, {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: undefined,
    model: 'gpt-public',
    choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello there' }, logprobs: null, finish_reason: null }],
  });
  assert.deepEqual(events[1].chunk?.choices, [{ index: 0, finish_reason: 'stop', delta: {} }]);
  assert.deepEqual(events[2].chunk?.choices, []);
  assert.deepEqual(events[2].chunk?.usage, ANSWER.usage);
  assert.deepEqual(events[2].usage, { inputTokens: 40, cachedInputTokens: 2, outputTokens: 38 });
  assert.equal(events[2].usageOnly, true, 'sent to the client only when it asked for usage');

  const completion = await collect(
    await answerTo(JSON.stringify({ id: 'cmpl-1', object: 'text_completion', created: 5, model: 'gpt-public', choices: [{ index: 0, text: 'once', finish_reason: 'length' }] }), 'application/json', {
      operation: 'completion',
      stream: true,
    }),
  );
  assert.deepEqual(
    completion.map((event) => event.chunk?.choices),
    [
      [{ index: 0, text: 'once', logprobs: null, finish_reason: null }],
      [{ index: 0, finish_reason: 'length', text: '', logprobs: null }],
    ],
  );
  assert.equal(completion[0].chunk?.object, 'text_completion');
});

test('stream chunks name the public model; chunks that already do are passed on untouched', () => {
  const translator = createPassthroughStreamTranslator(testContext(testTarget(), { model: 'llama' }), 'openai');
  const upstream = '{"id":"chatcmpl-9","object":"chat.completion.chunk","created":7,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":"a \\"model\\": b"},"finish_reason":null}]}';
  const [event] = translator.translate({ data: upstream });
  assert.equal(event.raw, upstream.replace('"meta-llama/Llama-3.1-8B-Instruct"', '"llama"'));
  assert.equal(JSON.parse(event.raw!).id, 'chatcmpl-9');

  const spaced = '{"id": "c", "model": "other", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}';
  const [usageEvent] = translator.translate({ data: spaced });
  assert.equal(usageEvent.raw, spaced.replace('"other"', '"llama"'));
  assert.equal(usageEvent.chunk?.model, 'llama');
  assert.deepEqual(usageEvent.usage, { inputTokens: 3, outputTokens: 2 }, 'usage is found with spaces around the colon too');
  assert.equal(usageEvent.usageOnly, true);

  const same = '{"id":"c","model":"llama","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}';
  const [untouched] = translator.translate({ data: same });
  assert.equal(untouched.raw, same);
});
