import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/start-gateway.js';
import { tempDirectory } from '../helpers/test-databases.js';

describe('per-deployment capacity', () => {
  let running: RunningGateway;

  before(async () => {
    const configFile = join(tempDirectory(), 'gw.yaml');
    writeFileSync(
      configFile,
      [
        'models:',
        '  - id: capped-chat',
        '    owned_by: test',
        '    pricing: { inputPerMillion: "0.10", outputPerMillion: "0.40" }',
        '    deployments:',
        '      - { id: small-account, provider: local, upstream_model: local-chat, priority: 0, rpm: 2 }',
        '      - { id: big-account, provider: local, upstream_model: local-chat, priority: 1 }',
      ].join('\n'),
    );
    running = await startGateway({ config: { configFile } });
  });
  after(async () => running?.close());

  test('a deployment at its RPM capacity is skipped for the next one', async () => {
    const routes: string[] = [];
    for (let index = 0; index < 4; index++) {
      const response = await fetch(`${running.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${running.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'capped-chat', gw_cache: false, messages: [{ role: 'user', content: `call ${index}` }] }),
      });
      assert.equal(response.status, 200);
      routes.push((response.headers.get('x-gw-route') ?? '').split(';')[0]);
    }
    assert.deepEqual(routes, ['small-account', 'small-account', 'big-account', 'big-account']);
  });
});
