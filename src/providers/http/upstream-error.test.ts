import assert from 'node:assert/strict';
import { test } from 'node:test';
import { extractErrorText, parseOpenAIError, retryAfterSeconds, sanitizeUpstreamMessage, upstreamError } from './upstream-error.js';

const map = (status: number, body: unknown = {}, headers: Record<string, string> = {}) => parseOpenAIError('acme', status, body, headers);

test('statuses map to the catalog codes', () => {
  assert.equal(map(408).code, 'upstream_request_timeout');
  assert.equal(map(429).code, 'upstream_rate_limited');
  assert.equal(map(401).code, 'upstream_authentication');
  assert.equal(map(403).code, 'upstream_authentication');
  assert.equal(map(404).code, 'upstream_bad_request');
  assert.equal(map(400).code, 'upstream_bad_request');
  assert.equal(map(500).code, 'upstream_unavailable');
  assert.equal(map(502).code, 'upstream_unavailable');
  assert.equal(map(503).code, 'upstream_unavailable');
  assert.equal(map(529).code, 'upstream_unavailable');
  assert.equal(map(504).code, 'upstream_timeout');
  assert.equal(map(504).status, 504);
  assert.equal(map(302).code, 'upstream_bad_response');
  // Anthropic says overloaded with a 429 at times; that is an outage, not the caller's rate.
  assert.equal(upstreamError({ provider: 'anthropic', status: 429, message: 'Overloaded', upstreamType: 'overloaded_error', headers: {} }).code, 'upstream_unavailable');
});

test('429 keeps the wait as a detail and a header; a 503 Retry-After is kept for the router', () => {
  const limited = map(429, { error: { message: 'slow down' } }, { 'retry-after': '7' });
  assert.equal(limited.details?.retry_after_seconds, 7);
  assert.equal(limited.details?.upstream_status, 429);
  assert.equal(limited.headers?.['retry-after'], '7');
  assert.equal(map(503, {}, { 'retry-after': '2' }).details?.retry_after_seconds, 2);
  assert.equal(retryAfterSeconds({ 'retry-after': '1.2' }), 2);
  assert.equal(retryAfterSeconds({ 'retry-after': new Date(10_000).toUTCString() }, 4_000), 6);
  assert.equal(retryAfterSeconds({ 'retry-after': 'soon' }), undefined);
});

test('context length and content filter are recognised by code or by wording', () => {
  const byCode = map(400, { error: { message: 'Too long.', type: 'invalid_request_error', code: 'context_length_exceeded' } });
  assert.equal(byCode.code, 'context_length_exceeded');
  assert.equal(map(400, { error: { message: "This model's maximum context length is 8192 tokens." } }).code, 'context_length_exceeded');
  assert.equal(map(400, { error: { message: 'Nope.', code: 'content_policy_violation' } }).code, 'content_filtered');
  assert.equal(map(400, { error: { message: 'The response was filtered due to the prompt triggering content management policy.', code: 'content_filter' } }).code, 'content_filtered');
});

test('secrets and internal addresses are redacted from quoted upstream text', () => {
  const samples = [
    'Incorrect API key provided: sk-proj-abcdefghijklmnop1234.',
    'key AIzaSyA1234567890abcdefghijklmnopqrstu is invalid',
    'credential AKIAIOSFODNN7EXAMPLE rejected',
    'header Bearer abc.def.ghi was wrong',
    'azure key 0123456789abcdef0123456789abcdef rejected',
    'see https://internal.example.com/v1/x?key=1 for details',
  ];
  for (const sample of samples) {
    const text = sanitizeUpstreamMessage(sample);
    assert.match(text, /\[redacted\]/, sample);
    assert.doesNotMatch(text, /sk-proj|AIzaSy|AKIAIOSF|abc\.def|0123456789abcdef0123|internal\.example/, sample);
  }
  const error = map(400, { error: { message: samples[0] } });
  assert.doesNotMatch(error.message, /sk-proj/);
  assert.match(error.message, /acme/);
  assert.equal(sanitizeUpstreamMessage('x'.repeat(600)).length, 501);
  assert.equal(sanitizeUpstreamMessage('max_tokens must be at least 1'), 'max_tokens must be at least 1');
});

test('error bodies of every shape are read', () => {
  assert.deepEqual(extractErrorText('plain text'), { message: 'plain text' });
  assert.deepEqual(extractErrorText({ message: 'cohere says no' }), { message: 'cohere says no', type: undefined });
  assert.deepEqual(extractErrorText({ error: { code: 429, message: 'quota', status: 'RESOURCE_EXHAUSTED' } }), {
    message: 'quota',
    type: 'RESOURCE_EXHAUSTED 429',
  });
  assert.deepEqual(extractErrorText({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }), {
    message: 'Overloaded',
    type: 'overloaded_error',
  });
  assert.deepEqual(extractErrorText(null), {});
});
