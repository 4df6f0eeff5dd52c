import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { once } from 'node:events';
import { adminRequest, startGateway, type RunningGateway } from '../../../test/helpers/start-gateway.js';
import { startGatewayForClient } from './start-gateway-for-client.js';
import {
  APIError,
  AuthenticationError,
  BadRequestError,
  Gw,
  GwCreditError,
  GwGuardrailBlockedError,
  GwRateLimitError,
  GwServiceError,
  InternalServerError,
  NotFoundError,
  RateLimitError,
} from '../src/index.js';

// Each gateway error, provoked on a real gw, caught as its class. The client is configured only
// through GW_API_KEY and GW_BASE_URL (keys of other tenants are passed explicitly).
let running: RunningGateway;
let gw: Gw;

before(async () => {
  running = await startGatewayForClient();
  gw = new Gw({ maxRetries: 0 });
});

after(async () => {
  await running?.close();
});

async function issueKey(body: Record<string, unknown>): Promise<string> {
  const created = await adminRequest(running, 'POST', '/api/admin/keys', { org_id: running.orgId, ...body });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  return created.body.key as string;
}

test('catch (e) { if (e instanceof GwCreditError) … } on a key over its budget', async () => {
  const broke = new Gw({ apiKey: await issueKey({ name: 'client-broke', budget: { limit_usd: '0.000000001' } }), maxRetries: 0 });
  let caught: GwCreditError | undefined;
  try {
    await broke.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'ping' }] });
  } catch (e) {
    if (e instanceof GwCreditError) caught = e;
    else throw e;
  }
  assert.ok(caught, 'GwCreditError was thrown');
  assert.ok(caught instanceof APIError);
  assert.equal(caught.status, 402);
  assert.equal(caught.code, 'insufficient_credits');
  assert.equal(caught.type, 'insufficient_credits');
  assert.ok(caught.message.length > 0);
  assert.match(caught.requestID ?? '', /^req_/);

  // Streams fail the same way, before the first chunk.
  await assert.rejects(
    broke.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'ping' }], stream: true }),
    (error: unknown) => error instanceof GwCreditError,
  );
});

test('GwRateLimitError for the RPM and the TPM ceilings, with retryAfter', async () => {
  const rpm = new Gw({ apiKey: await issueKey({ name: 'client-rpm', limits: { rpm: 1 } }), maxRetries: 0 });
  await rpm.models.list().catch(() => undefined);
  const request = () => rpm.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'ping' }] });
  let limited: unknown;
  for (let attempt = 0; attempt < 3 && !limited; attempt += 1) limited = await request().then(() => undefined, (error: unknown) => error);
  assert.ok(limited instanceof GwRateLimitError, String(limited));
  assert.ok(limited instanceof RateLimitError);
  assert.equal(limited.status, 429);
  assert.equal(limited.code, 'rate_limit_exceeded');
  assert.ok((limited.retryAfter ?? 0) > 0);
  assert.match(limited.requestID ?? '', /^req_/);

  // Each call fits the limit alone (one counting more than the whole limit is a 400, never a 429);
  // the second does not fit once the first has counted.
  const tpm = new Gw({ apiKey: await issueKey({ name: 'client-tpm', limits: { tpm: 40 } }), maxRetries: 0 });
  await tpm.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 25 });
  const second = await tpm.chat.completions
    .create({ model: 'local-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 30 })
    .then(() => undefined, (error: unknown) => error);
  assert.ok(second instanceof GwRateLimitError, String(second));
  assert.equal(second.code, 'tpm_limit_exceeded');
});

test('standard statuses keep the SDK classes', async () => {
  const wrongKey = new Gw({ apiKey: `sk-gw-${'x'.repeat(40)}`, maxRetries: 0 });
  await assert.rejects(wrongKey.models.list(), (error: unknown) => error instanceof AuthenticationError && error.code === 'invalid_api_key');
  await assert.rejects(gw.models.retrieve('no-such-model'), (error: unknown) => error instanceof NotFoundError);
  await assert.rejects(
    gw.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'x' }], temperature: 3 }),
    (error: unknown) => error instanceof BadRequestError && !(error instanceof GwGuardrailBlockedError) && error.code === 'invalid_request',
  );
});

const redisUrl = process.env['GW_TEST_REDIS_URL'];

test(
  'GwServiceError (503 credit_check_failed) when the credit system is unavailable',
  { skip: redisUrl ? false : 'GW_TEST_REDIS_URL is not set: the Redis-backed credit check cannot be taken down' },
  async () => {
    const withRedis = await startGateway({ config: { redisUrl } });
    try {
      const client = new Gw({ apiKey: withRedis.apiKey, baseURL: withRedis.baseURL, maxRetries: 0 });
      await client.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'x' }] });
      // The gateway's Redis goes away: the call must be refused rather than run unmetered. Until the
      // gateway has seen the connection close, a call may still be admitted from credit it already
      // holds in Redis (an allowance), so the call is made once the close is seen.
      const redis = withRedis.gateway.services.redis!;
      const closed = once(redis, 'close');
      redis.disconnect();
      await closed;
      const error = await client.chat.completions
        .create({ model: 'local-chat', messages: [{ role: 'user', content: 'x' }] })
        .then(() => undefined, (e: unknown) => e);
      assert.ok(error instanceof GwServiceError, String(error));
      assert.ok(error instanceof InternalServerError);
      assert.equal(error.status, 503);
      assert.equal(error.code, 'credit_check_failed');
      assert.match(error.requestID ?? '', /^req_/);
    } finally {
      await withRedis.close();
    }
  },
);
