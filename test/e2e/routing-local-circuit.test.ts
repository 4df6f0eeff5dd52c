import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/start-gateway.js';

describe('the built-in local provider keeps no circuit', () => {
  let running: RunningGateway;
  before(async () => {
    running = await startGateway();
  });
  after(async () => running?.close());

  const chat = async (content: string) => {
    const response = await fetch(`${running.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${running.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content }] }),
    });
    return { status: response.status, body: (await response.json()) as { error?: { code: string } } };
  };

  test('simulated upstream failures do not turn later local-chat calls into 503s', async () => {
    assert.equal((await chat('[local:fail:429] hello')).status, 429);
    // More failing calls than the default consecutive_failures (5): a remote deployment's circuit would open.
    for (let index = 0; index < 6; index += 1) assert.notEqual((await chat('[local:fail:500] hello')).status, 200);
    const badRequest = await chat('[local:fail:400] hello');
    assert.equal(badRequest.status, 400, JSON.stringify(badRequest.body));
    assert.equal(badRequest.body.error?.code, 'upstream_bad_request');
    assert.equal((await chat('hello')).status, 200);
  });
});
