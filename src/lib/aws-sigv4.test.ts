import assert from 'node:assert/strict';
import { test } from 'node:test';
import { signingKey, signRequest } from './aws-sigv4.js';

// AWS's published SigV4 test suite (aws-sig-v4-test-suite) and IAM user-guide example values.
const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const scope = { region: 'us-east-1', service: 'service' };
const now = new Date('2015-08-30T12:36:00Z');
const prefix = 'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=';

test('get-vanilla', () => {
  const signed = signRequest({ method: 'GET', url: 'https://example.amazonaws.com/', headers: {} }, credentials, scope, now);
  assert.equal(signed.headers['x-amz-date'], '20150830T123600Z');
  assert.equal(signed.headers.authorization, `${prefix}5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31`);
});

test('get-vanilla-query-order-key-case', () => {
  const signed = signRequest({ method: 'GET', url: 'https://example.amazonaws.com/?Param2=value2&Param1=value1', headers: {} }, credentials, scope, now);
  assert.equal(signed.headers.authorization, `${prefix}b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500`);
});

test('post-vanilla', () => {
  const signed = signRequest({ method: 'POST', url: 'https://example.amazonaws.com/', headers: {} }, credentials, scope, now);
  assert.equal(signed.headers.authorization, `${prefix}5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b`);
});

test('derived signing key of the IAM guide example', () => {
  const key = signingKey('wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', '20150830', { region: 'us-east-1', service: 'iam' });
  assert.equal(key.toString('hex'), 'c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9');
});

test('session token is added and signed; the body changes the signature', () => {
  const request = { method: 'POST', url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/a%3Ab/converse', headers: { 'content-type': 'application/json' }, body: '{}' };
  const signed = signRequest(request, { ...credentials, sessionToken: 'TOKEN' }, { region: 'us-east-1', service: 'bedrock' }, now);
  assert.equal(signed.headers['x-amz-security-token'], 'TOKEN');
  assert.match(signed.headers.authorization, /SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature=[0-9a-f]{64}$/);
  const other = signRequest({ ...request, body: '{"a":1}' }, { ...credentials, sessionToken: 'TOKEN' }, { region: 'us-east-1', service: 'bedrock' }, now);
  assert.notEqual(other.headers.authorization, signed.headers.authorization);
});
