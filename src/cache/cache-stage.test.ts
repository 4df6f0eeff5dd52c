import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Next, Outcome } from '../pipeline/stage.js';
import { chatCompletion, collect, fakeCall, rawStream, streamText } from '../../test/features/fake-gateway-call.js';
import { createCacheStage } from './cache-stage.js';
import { createMemoryResponseCache } from './memory-response-cache.js';
import type { ResponseCache } from './response-cache.js';
import { deferred, nextTurn } from '../../test/helpers/deferred.js';

const request = { model: 'test-model', messages: [{ role: 'user', content: 'hello' }] };

function counting(answer: () => Outcome): { next: Next; calls: () => number } {
  let calls = 0;
  return {
    next: async () => {
      calls++;
      return answer();
    },
    calls: () => calls,
  };
}

test('miss, then hit without calling upstream; gw_cache false skips', async () => {
  const stage = createCacheStage({ cache: createMemoryResponseCache() });
  const upstream = counting(() => ({ kind: 'json', body: chatCompletion('hi there') }));
  const first = fakeCall({ request });
  await stage.run(first, upstream.next);
  assert.equal(first.record.cache, 'miss');
  assert.equal(first.record.headers['x-gw-cache'], 'miss');
  const second = fakeCall({ request });
  const outcome = await stage.run(second, upstream.next);
  assert.equal(second.record.cache, 'hit');
  assert.equal(second.record.headers['x-gw-cache'], 'hit');
  assert.equal(upstream.calls(), 1);
  assert.deepEqual(outcome.kind === 'json' && outcome.body, chatCompletion('hi there'));
  const bypass = fakeCall({ request: { ...request, gw_cache: false } });
  await stage.run(bypass, upstream.next);
  assert.equal(bypass.record.cache, 'skip');
  assert.equal(upstream.calls(), 2);
});

test('the org setting turns caching off, and gw_cache true turns it back on', async () => {
  const stage = createCacheStage({ cache: createMemoryResponseCache() });
  const upstream = counting(() => ({ kind: 'json', body: chatCompletion('x') }));
  for (let index = 0; index < 2; index++) await stage.run(fakeCall({ request, settings: { cacheDefault: false } }), upstream.next);
  assert.equal(upstream.calls(), 2);
  for (let index = 0; index < 2; index++) await stage.run(fakeCall({ request: { ...request, gw_cache: true }, settings: { cacheDefault: false } }), upstream.next);
  assert.equal(upstream.calls(), 3);
});

test('orgs do not share entries', async () => {
  const stage = createCacheStage({ cache: createMemoryResponseCache() });
  const upstream = counting(() => ({ kind: 'json', body: chatCompletion('x') }));
  await stage.run(fakeCall({ request, orgId: 'org-a' }), upstream.next);
  const other = fakeCall({ request, orgId: 'org-b' });
  await stage.run(other, upstream.next);
  assert.equal(other.record.cache, 'miss');
  assert.equal(upstream.calls(), 2);
});

test('incomplete or failed answers are not stored', async () => {
  const stage = createCacheStage({ cache: createMemoryResponseCache() });
  const truncated = { ...chatCompletion('x'), choices: [{ index: 0, message: { role: 'assistant', content: 'x' }, finish_reason: null }] };
  const upstream = counting(() => ({ kind: 'json', body: truncated }));
  await stage.run(fakeCall({ request }), upstream.next);
  await stage.run(fakeCall({ request }), upstream.next);
  assert.equal(upstream.calls(), 2);
  const failing = createCacheStage({ cache: createMemoryResponseCache() });
  await assert.rejects(failing.run(fakeCall({ request }), async () => { throw new Error('upstream down'); }));
  const broken = counting(() => rawStream(['par', 'tial'], { finish: false }));
  await collect(await failing.run(fakeCall({ request, stream: true }), broken.next));
  await collect(await failing.run(fakeCall({ request, stream: true }), broken.next));
  assert.equal(broken.calls(), 2);
});

test('a streamed answer is assembled and serves both stream and JSON hits', async () => {
  const stage = createCacheStage({ cache: createMemoryResponseCache() });
  const upstream = counting(() => rawStream(['Hel', 'lo ', 'world']));
  const live = await collect(await stage.run(fakeCall({ request: { ...request, stream: true } }), upstream.next));
  assert.equal(streamText(live), 'Hello world');
  const jsonCall = fakeCall({ request });
  const json = await stage.run(jsonCall, upstream.next);
  assert.equal(jsonCall.record.cache, 'hit');
  assert.equal(json.kind === 'json' && (json.body as any).choices[0].message.content, 'Hello world');
  assert.deepEqual(json.kind === 'json' && (json.body as any).usage, { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
  const streamCall = fakeCall({ request: { ...request, stream: true }, includeUsage: true });
  const replayed = await collect(await stage.run(streamCall, upstream.next));
  assert.equal(upstream.calls(), 1);
  assert.equal(streamText(replayed), 'Hello world');
  const chunks = replayed.map((event) => event.chunk!);
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  assert.equal(chunks.at(-2)!.choices[0].finish_reason, 'stop');
  assert.deepEqual(chunks.at(-1)!.choices, []);
  assert.equal(chunks.at(-1)!.usage?.total_tokens, 8);
  assert.ok(replayed.every((event) => event.usage === undefined), 'a hit carries no billable usage');
});

test('a JSON answer is replayed as chunks for a stream request, tool calls included', async () => {
  const stage = createCacheStage({ cache: createMemoryResponseCache() });
  const body = {
    ...chatCompletion(''),
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
        finish_reason: 'tool_calls',
      },
    ],
  };
  const upstream = counting(() => ({ kind: 'json', body }));
  await stage.run(fakeCall({ request }), upstream.next);
  const events = await collect(await stage.run(fakeCall({ request: { ...request, stream: true } }), upstream.next));
  const toolChunk = events.find((event) => event.chunk?.choices[0]?.delta.tool_calls);
  assert.equal(toolChunk?.chunk?.choices[0].delta.tool_calls?.[0].function?.arguments, '{"a":1}');
  assert.equal(events.at(-1)?.chunk?.choices[0].finish_reason, 'tool_calls');
});

test('a failing cache backend degrades to uncached calls', async () => {
  const errors: unknown[] = [];
  const stage = createCacheStage({
    cache: { get: async () => { throw new Error('down'); }, set: async () => { throw new Error('down'); }, delete: async () => {} },
    onError: (error) => errors.push(error),
  });
  const outcome = await stage.run(fakeCall({ request }), async () => ({ kind: 'json', body: chatCompletion('ok') }));
  assert.equal(outcome.kind, 'json');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(errors.length, 2);
});

test('with admission in flight the lookup is sent at once, but a refused call never gets the cached answer', async () => {
  const memory = createMemoryResponseCache();
  const lookups: string[] = [];
  const cache: ResponseCache = { ...memory, get: (key) => (lookups.push(key), memory.get(key)), set: (key, value, ttlMs) => memory.set(key, value, ttlMs) };
  const stage = createCacheStage({ cache });
  const upstream = counting(() => ({ kind: 'json', body: chatCompletion('cached once') }));
  await stage.run(fakeCall({ request }), upstream.next);

  const refused = deferred();
  const refusedCall = stage.run({ ...fakeCall({ request }), admission: refused.promise }, upstream.next);
  await nextTurn();
  assert.equal(lookups.length, 2, 'looked up before admission answered');
  refused.refuse(new Error('rate limited'));
  await assert.rejects(refusedCall, /rate limited/);

  const passing = deferred();
  const hit = fakeCall({ request });
  const answered = stage.run({ ...hit, admission: passing.promise }, upstream.next);
  passing.pass();
  const outcome = await answered;
  assert.equal(hit.record.cache, 'hit');
  assert.deepEqual(outcome.kind === 'json' && outcome.body, chatCompletion('cached once'));
  assert.equal(upstream.calls(), 1);
});

/** A stream of the given chunk choices (index 0), as an upstream would send them. */
function chunkStream(choices: Array<Record<string, unknown>>): Outcome {
  const base = { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'test-model' };
  const events = choices.map((choice) => ({ raw: JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: null, ...choice }] }) }));
  return { kind: 'stream', events: (async function* () { yield* events; })() };
}

test('a streamed legacy function call is stored whole and replayed, not as an empty answer', async () => {
  const stage = createCacheStage({ cache: createMemoryResponseCache() });
  const upstream = counting(() =>
    chunkStream([
      { delta: { role: 'assistant', content: null, function_call: { name: 'lookup', arguments: '' } } },
      { delta: { function_call: { arguments: '{"q":"x"}' } } },
      { delta: {}, finish_reason: 'function_call' },
    ]),
  );
  await collect(await stage.run(fakeCall({ request: { ...request, stream: true } }), upstream.next));
  const jsonCall = fakeCall({ request });
  const json = await stage.run(jsonCall, upstream.next);
  assert.equal(jsonCall.record.cache, 'hit');
  assert.deepEqual(json.kind === 'json' && (json.body as any).choices[0].message.function_call, { name: 'lookup', arguments: '{"q":"x"}' });
  const replayed = await collect(await stage.run(fakeCall({ request: { ...request, stream: true } }), upstream.next));
  const call = replayed.map((event) => event.chunk?.choices[0]?.delta as any).find((delta) => delta?.function_call);
  assert.deepEqual(call?.function_call, { name: 'lookup', arguments: '{"q":"x"}' });
  assert.equal(upstream.calls(), 1);
});

test('a stream with a part the cache cannot hold (audio) is not stored', async () => {
  const stage = createCacheStage({ cache: createMemoryResponseCache() });
  const upstream = counting(() =>
    chunkStream([{ delta: { role: 'assistant', content: '', audio: { id: 'audio_1', data: 'UklGR', transcript: 'hi' } } }, { delta: {}, finish_reason: 'stop' }]),
  );
  await collect(await stage.run(fakeCall({ request: { ...request, stream: true } }), upstream.next));
  const again = fakeCall({ request: { ...request, stream: true } });
  await collect(await stage.run(again, upstream.next));
  assert.equal(again.record.cache, 'miss');
  assert.equal(upstream.calls(), 2);
});

test('a stored JSON answer a stream cannot replay answers JSON requests only', async () => {
  const stage = createCacheStage({ cache: createMemoryResponseCache() });
  const body = chatCompletion('spoken');
  (body.choices[0].message as Record<string, unknown>).audio = { id: 'audio_1', data: 'UklGR', transcript: 'spoken' };
  const upstream = counting(() => ({ kind: 'json', body }));
  await stage.run(fakeCall({ request }), upstream.next);
  const streamCall = fakeCall({ request: { ...request, stream: true } });
  await stage.run(streamCall, upstream.next);
  assert.equal(streamCall.record.cache, 'miss');
  const jsonCall = fakeCall({ request });
  await stage.run(jsonCall, upstream.next);
  assert.equal(jsonCall.record.cache, 'hit');
  assert.equal(upstream.calls(), 2);
});

test('an answer served by a fallback model is not stored under the requested model', async () => {
  const stage = createCacheStage({ cache: createMemoryResponseCache() });
  let served = 0;
  const next: Next = async (call) => {
    served++;
    call.record.headers['x-gw-route'] = 'backup#0;attempts=2;fallback=backup';
    return call.stream ? rawStream(['from backup']) : { kind: 'json', body: chatCompletion('from backup', 'backup') };
  };
  await stage.run(fakeCall({ request }), next);
  await collect(await stage.run(fakeCall({ request: { ...request, stream: true } }), next));
  const third = fakeCall({ request });
  await stage.run(third, next);
  assert.equal(third.record.cache, 'miss');
  assert.equal(served, 3);
});
