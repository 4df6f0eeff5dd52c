import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createAwsEventStreamDecoder, encodeEventStreamMessage } from '../../lib/aws-event-stream.js';
import { assertMatchesFixture, readJsonFixture, testContext, testTarget, translateMessages } from '../../../test/fakes/fixture-files.js';
import type { ChatRequest } from '../../protocol/chat.js';
import type { UpstreamStreamMessage } from '../http/provider-adapter.js';
import { createBedrockAdapter } from './bedrock-adapter.js';

const fixtures = fileURLToPath(new URL('./__fixtures__/', import.meta.url));
const adapter = createBedrockAdapter({ now: () => new Date('2024-05-01T10:00:00Z') });
const chat = adapter.translators.chat!;
const settings = { region: 'eu-west-1', accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const target = testTarget({ provider: 'bedrock', upstreamModel: 'anthropic.claude-3-5-sonnet-20240620-v1:0', apiKey: undefined, settings });
const context = testContext(target, { model: 'bedrock-public' });

/** Encodes fixture events as the binary event stream a real endpoint sends. */
function encodeEvents(name: string): Buffer {
  const events = readJsonFixture<Array<{ event?: string; exception?: string; data: string }>>(fixtures, name);
  return Buffer.concat(
    events.map((event) =>
      event.exception
        ? encodeEventStreamMessage({ ':exception-type': event.exception, ':content-type': 'application/json', ':message-type': 'exception' }, event.data)
        : encodeEventStreamMessage({ ':event-type': event.event!, ':content-type': 'application/json', ':message-type': 'event' }, event.data),
    ),
  );
}

function decode(bytes: Buffer, pieceSize: number): UpstreamStreamMessage[] {
  const decoder = createAwsEventStreamDecoder();
  const messages: UpstreamStreamMessage[] = [];
  for (let offset = 0; offset < bytes.length; offset += pieceSize) messages.push(...decoder.push(bytes.subarray(offset, offset + pieceSize)));
  return [...messages, ...decoder.end()];
}

function assertStreamFixture(eventsName: string, expectedName: string) {
  const bytes = encodeEvents(eventsName);
  const whole = translateMessages(chat.createStreamTranslator!(context), decode(bytes, bytes.length));
  for (const pieceSize of [1, 5, 64]) {
    assert.deepEqual(translateMessages(chat.createStreamTranslator!(context), decode(bytes, pieceSize)), whole, `pieces of ${pieceSize}`);
  }
  assertMatchesFixture(fixtures, expectedName, whole);
  return whole;
}

test('converse request: body, URL with the encoded model id, SigV4 headers', () => {
  const upstream = chat.buildRequest(readJsonFixture<ChatRequest>(fixtures, 'tools.request.json'), { ...context, stream: false });
  assert.equal(upstream.url, 'https://bedrock-runtime.eu-west-1.amazonaws.com/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse');
  assert.deepEqual(JSON.parse(String(upstream.body)), readJsonFixture(fixtures, 'tools.upstream.json'));
  assert.equal(upstream.headers['x-amz-date'], '20240501T100000Z');
  assert.match(
    upstream.headers.authorization,
    /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20240501\/eu-west-1\/bedrock\/aws4_request, SignedHeaders=accept;content-type;host;x-amz-date, Signature=[0-9a-f]{64}$/,
  );
  // Deterministic for a fixed clock.
  const again = chat.buildRequest(readJsonFixture<ChatRequest>(fixtures, 'tools.request.json'), { ...context, stream: false });
  assert.equal(again.headers.authorization, upstream.headers.authorization);
});

test('converse-stream URL; API-key deployments use a bearer token', () => {
  const keyed = testContext(testTarget({ ...target, settings: {}, apiKey: 'bedrock-api-key', baseUrl: 'http://127.0.0.1:9' }), { model: 'b' });
  const upstream = chat.buildRequest({ model: 'b', messages: [{ role: 'user', content: 'hi' }] }, { ...keyed, stream: true });
  assert.equal(upstream.url, 'http://127.0.0.1:9/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream');
  assert.equal(upstream.headers.authorization, 'Bearer bedrock-api-key');
});

test('converse response: text, toolUse, cache usage', () => {
  const result = chat.parseResponse(readJsonFixture(fixtures, 'tool-use.response.json'), { ...context, contentType: 'application/json', raw: Buffer.alloc(0) });
  assert.deepEqual(result.usage, { inputTokens: 375, outputTokens: 36, cachedInputTokens: 100 });
  assertMatchesFixture(fixtures, 'tool-use.completion.json', result.body);
});

test('converse stream: binary frames split anywhere → text and tool-call chunks, usage from metadata', () => {
  const outcome = assertStreamFixture('tool-use.events.json', 'tool-use.chunks.json');
  assert.deepEqual(outcome.events.at(-1)?.usage, { inputTokens: 375, outputTokens: 36 });
});

test('converse stream: an exception message ends the stream', () => {
  const outcome = assertStreamFixture('throttled.events.json', 'throttled.chunks.json');
  assert.equal(outcome.error?.code, 'upstream_rate_limited');
});

test('errors: x-amzn-errortype and statuses', () => {
  const validation = adapter.parseError(400, { message: 'Input is too long for requested model.' }, { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
  assert.equal(validation.code, 'context_length_exceeded');
  assert.doesNotMatch(validation.message, /internal\.amazon/);
  assert.equal(adapter.parseError(403, { message: 'The security token included in the request is invalid.' }, {}).code, 'upstream_authentication');
  assert.equal(adapter.parseError(429, { message: 'Too many requests' }, {}).code, 'upstream_rate_limited');
  const modelError = adapter.parseError(424, { message: 'Model error' }, {});
  assert.equal(modelError.code, 'upstream_unavailable');
  assert.equal(modelError.details?.upstream_status, 424);
});
