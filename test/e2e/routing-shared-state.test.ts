import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { adminRequest, startGateway, type RunningGateway } from '../helpers/start-gateway.js';
import { tempDirectory } from '../helpers/test-databases.js';
import { startFlakyUpstream, type FlakyUpstream } from '../fakes/flaky-upstream.js';

const redisUrl = process.env.GW_TEST_REDIS_URL;

describe('routing with Redis: circuits and statistics shared by instances', { skip: redisUrl ? false : 'GW_TEST_REDIS_URL is not set: shared routing state test skipped' }, () => {
  const suffix = randomUUID().slice(0, 8);
  const primaryId = `shared-primary-${suffix}`;
  const backupId = `shared-backup-${suffix}`;
  let primary: FlakyUpstream;
  let backup: FlakyUpstream;
  let first: RunningGateway;
  let second: RunningGateway;

  before(async () => {
    primary = await startFlakyUpstream('primary', { kind: 'status', status: 503 });
    backup = await startFlakyUpstream('backup');
    const configFile = join(tempDirectory(), 'gw.yaml');
    const deployment = (id: string, upstream: FlakyUpstream, priority: number) => [
      `      - id: ${id}`,
      '        provider: openai-compatible',
      '        upstream_model: x',
      `        base_url: ${upstream.baseUrl}`,
      '        api_key: sk-upstream',
      `        priority: ${priority}`,
    ];
    writeFileSync(
      configFile,
      [
        'routing:',
        '  circuit: { consecutive_failures: 2, cool_down_ms: 60000 }',
        'models:',
        '  - id: shared-model',
        '    pricing: { inputPerMillion: "0.1", outputPerMillion: "0.2" }',
        '    deployments:',
        ...deployment(primaryId, primary, 0),
        ...deployment(backupId, backup, 1),
      ].join('\n'),
    );
    const config = { configFile, redisUrl, bootstrapTier: 'enterprise' as const };
    first = await startGateway({ config });
    second = await startGateway({ config });
  });
  after(async () => {
    await first?.close();
    await second?.close();
    await primary?.close();
    await backup?.close();
  });

  const ask = (running: RunningGateway, content: string) =>
    new OpenAI({ apiKey: running.apiKey, baseURL: running.baseURL, maxRetries: 0 }).chat.completions
      .create({ model: 'shared-model', messages: [{ role: 'user', content }] })
      .withResponse();

  test('a circuit opened through one instance is skipped by the other', async () => {
    await ask(first, 'one');
    await ask(first, 'two');
    assert.equal(primary.hits(), 2);
    const { data, response } = await ask(second, 'three');
    assert.equal(data.choices[0]!.message.content, 'from backup');
    assert.equal(response.headers.get('x-gw-route'), `${backupId};attempts=1`);
    assert.equal(primary.hits(), 2, 'the second instance never called the open deployment');

    // Each instance adds its call statistics to Redis every 100 ms, so the other sees them within that.
    type HealthRow = { deployment_id: string; circuit: string; samples: number };
    let rows: HealthRow[] = [];
    const deadline = Date.now() + 2_000;
    do {
      rows = (await adminRequest(second, 'GET', '/api/admin/deployments/health')).body.data as HealthRow[];
      if (rows.find((row) => row.deployment_id === backupId)?.samples === 3) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    } while (Date.now() < deadline);
    assert.equal(rows.find((row) => row.deployment_id === primaryId)!.circuit, 'open');
    assert.equal(rows.find((row) => row.deployment_id === backupId)!.samples, 3, 'statistics from both instances');
  });
});
