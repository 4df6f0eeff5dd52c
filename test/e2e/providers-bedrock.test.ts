import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startFakeBedrock } from '../fakes/fake-bedrock.js';
import type { FakeUpstream, RecordedRequest } from '../fakes/fake-upstream.js';
import { assertCostHeader, assertErrorBody, startProviderGateway, type ProviderGateway } from './providers-gateway.js';

const ACCESS_KEY_ID = 'AKIAE2ETESTKEY000001';
const SECRET_ACCESS_KEY = 'e2eSecretAccessKey/0123456789abcdefghijklmn';
// Model ids with a colon exercise SigV4's double encoding of path segments.
const UPSTREAM_MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
const encode = (value: string) => encodeURIComponent(value).replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * Recomputes the SigV4 signature of a request as the upstream received it, written here from the
 * AWS documentation independently of the gateway's signer, and returns the parsed header.
 */
function verifySigV4(request: RecordedRequest, secretAccessKey: string): { credential: string; signedHeaders: string[] } {
  const authorization = String(request.headers.authorization ?? '');
  const match = /^AWS4-HMAC-SHA256 Credential=([^,]+), SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(authorization);
  assert.ok(match, `well-formed SigV4 authorization: ${authorization}`);
  const [, credential, signedHeaderList, signature] = match;
  const [, dateStamp, region, service, terminator] = credential.split('/');
  assert.equal(terminator, 'aws4_request');
  const amzDate = String(request.headers['x-amz-date']);
  assert.match(amzDate, /^\d{8}T\d{6}Z$/);
  assert.equal(amzDate.slice(0, 8), dateStamp);
  const signedHeaders = signedHeaderList.split(';');
  assert.ok(signedHeaders.includes('host') && signedHeaders.includes('x-amz-date'));
  const url = new URL(request.url, 'http://placeholder');
  const canonicalRequest = [
    request.method,
    url.pathname.split('/').map(encode).join('/'),
    '',
    signedHeaders.map((name) => `${name}:${String(request.headers[name]).trim()}\n`).join(''),
    signedHeaderList,
    sha256(request.body),
  ].join('\n');
  const scope = `${dateStamp}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, dateStamp), region), service), 'aws4_request');
  assert.equal(createHmac('sha256', key).update(stringToSign).digest('hex'), signature, 'the signature verifies');
  return { credential, signedHeaders };
}

describe('AWS Bedrock Converse upstream with SigV4', () => {
  let fake: FakeUpstream;
  let gateway: ProviderGateway;

  before(async () => {
    fake = await startFakeBedrock();
    const settings = { region: 'eu-west-3', accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET_ACCESS_KEY };
    const routed = (id: string) => ({ id, provider: 'bedrock', upstreamModel: UPSTREAM_MODEL, baseUrl: fake.baseUrl, settings });
    gateway = await startProviderGateway([routed('haiku'), routed('haiku-throttled'), routed('haiku-invalid')], {});
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  test('chat through the SDK: Converse body, signed request that verifies', async () => {
    const { data: completion, response } = await gateway.client.chat.completions
      .create({
        model: 'haiku',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'hello bedrock' },
        ],
        max_tokens: 64,
      })
      .withResponse();
    assert.ok(assertCostHeader(response.headers) > 0);
    assert.equal(completion.choices[0].message.content, 'Echo: hello bedrock');
    assert.equal(completion.choices[0].finish_reason, 'stop');
    assert.equal(completion.usage?.prompt_tokens, 10);
    assert.equal(completion.usage?.completion_tokens, 4);

    const sent = fake.requests.at(-1)!;
    assert.equal(sent.url, `/model/${encodeURIComponent(UPSTREAM_MODEL)}/converse`);
    const { credential } = verifySigV4(sent, SECRET_ACCESS_KEY);
    assert.match(credential, new RegExp(`^${ACCESS_KEY_ID}/\\d{8}/eu-west-3/bedrock/aws4_request$`));
    const body = sent.json as Record<string, any>;
    assert.deepEqual(body.system, [{ text: 'Be brief.' }]);
    assert.deepEqual(body.messages, [{ role: 'user', content: [{ text: 'hello bedrock' }] }]);
    assert.equal(body.inferenceConfig.maxTokens, 64);
  });

  test('stream through the SDK: the AWS event-stream framing, split across reads, decoded', async () => {
    const stream = await gateway.client.chat.completions.create({
      model: 'haiku',
      messages: [{ role: 'user', content: 'stream from bedrock please' }],
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
    assert.equal(content, 'Echo: stream from bedrock please');
    assert.equal(finish, 'stop');
    assert.equal(usage?.prompt_tokens, 10);
    assert.equal(usage?.completion_tokens, 4);
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.url, `/model/${encodeURIComponent(UPSTREAM_MODEL)}/converse-stream`);
    verifySigV4(sent, SECRET_ACCESS_KEY);
  });

  test('ThrottlingException stays 429 after retries; ValidationException is 400; no credential leaks', async () => {
    for (let index = 0; index < 3; index++) {
      fake.failNext({ status: 429, headers: { 'x-amzn-errortype': 'ThrottlingException' }, body: { message: 'Too many requests, please wait before trying again.' } });
    }
    const throttled = await gateway.post('/chat/completions', { model: 'haiku-throttled', messages: [{ role: 'user', content: 'hi' }] });
    assertErrorBody(throttled.json, 429, throttled.status, [ACCESS_KEY_ID, SECRET_ACCESS_KEY]);

    fake.failNext({
      status: 400,
      headers: { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' },
      body: { message: `Malformed input request for credential ${ACCESS_KEY_ID}` },
    });
    const invalid = await gateway.post('/chat/completions', { model: 'haiku-invalid', messages: [{ role: 'user', content: 'hi' }] });
    assertErrorBody(invalid.json, 400, invalid.status, [ACCESS_KEY_ID, SECRET_ACCESS_KEY, 'internal.amazon.com']);
    assert.equal(invalid.json.error.code, 'upstream_bad_request');
  });
});
