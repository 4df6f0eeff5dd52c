import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { spawnGateway, type GatewayProcess } from '../helpers/spawn-gateway.js';
import { tempDirectory } from '../helpers/test-databases.js';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fakes/fake-openai-upstream.js';

const KEY = 'sk-gw-' + 'S'.repeat(40);

describe('graceful shutdown on SIGTERM', () => {
  let upstream: FakeOpenAIUpstream;
  let gateway: GatewayProcess;
  let dataDir: string;

  before(async () => {
    upstream = await startFakeOpenAIUpstream();
    dataDir = tempDirectory();
    const configFile = join(dataDir, 'gw.yaml');
    writeFileSync(
      configFile,
      `models:\n  - id: slow-model\n    owned_by: test\n    deployments:\n      - provider: openai-compatible\n        upstream_model: slow\n        base_url: ${upstream.baseUrl}\n        pricing: { inputPerMillion: "1", outputPerMillion: "2" }\n`,
    );
    gateway = await spawnGateway({
      GW_DATA_DIR: dataDir,
      GW_DATABASE_URL: `sqlite:${join(dataDir, 'gw.db')}`,
      GW_CONFIG: configFile,
      GW_BOOTSTRAP_API_KEY: KEY,
      GW_LOG_FLUSH_INTERVAL_MS: '60000',
      GW_SHUTDOWN_GRACE_MS: '10000',
    });
  });
  after(async () => {
    await gateway?.stop('SIGKILL');
    await upstream?.close();
  });

  test('streams in flight finish, new connections are refused, the log is flushed, exit code 0', async () => {
    upstream.chunkDelayMs = 400;
    const streams = [0, 1, 2].map(() =>
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'slow-model', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      }).then((response) => response.text()),
    );
    // Let the streams start before the signal.
    await new Promise((resolve) => setTimeout(resolve, 500));
    gateway.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 200));
    await assert.rejects(
      fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${KEY}`, connection: 'close' } }).then(async (response) => {
        // A 503 from a closing server also counts as refusing new work.
        if (response.status === 503) throw new Error('refused with 503');
        return response;
      }),
    );
    const bodies = await Promise.all(streams);
    for (const body of bodies) {
      assert.ok(body.trimEnd().endsWith('data: [DONE]'), `stream completed: ${body.slice(-200)}`);
      assert.match(body, /fake-openai-upstream/);
    }
    const code = await gateway.exited;
    assert.equal(code, 0, gateway.output());
    // The flush interval is a minute, so these rows can only be there because shutdown flushed them.
    const database = new Database(join(dataDir, 'gw.db'), { readonly: true });
    const rows = database.prepare("select count(*) as count from request_log where model = 'slow-model' and status = 200").get() as { count: number };
    database.close();
    assert.equal(rows.count, 3);
  });
});
