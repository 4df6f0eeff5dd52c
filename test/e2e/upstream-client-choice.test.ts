import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { whileSubscribed } from '../helpers/diagnostics-channels.js';
import { startGateway, type RunningGateway } from '../helpers/start-gateway.js';
import { tempDirectory } from '../helpers/test-databases.js';
import { FAKE_UPSTREAM_MARKER, startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fakes/fake-openai-upstream.js';

// GW_UPSTREAM_CLIENT as the gateway wires it: calls, streamed or not, go through gw's HTTP/1.1
// client by default and through undici with `undici`. Which one sent a request shows on the
// diagnostics channels each client publishes.

const CHANNELS = { http1: 'gw:upstream:request:create', undici: 'undici:request:create' } as const;

describe('GW_UPSTREAM_CLIENT, as the gateway wires it', () => {
  let upstream: FakeOpenAIUpstream;
  let configFile: string;

  before(async () => {
    upstream = await startFakeOpenAIUpstream();
    configFile = join(tempDirectory(), 'gw.yaml');
    writeFileSync(
      configFile,
      [
        'models:',
        '  - id: fake-chat',
        '    deployments:',
        '      - provider: openai-compatible',
        '        upstream_model: gpt-4o-mini',
        `        base_url: ${upstream.baseUrl}`,
        '        api_key_env: FAKE_UPSTREAM_KEY',
        '        pricing: { inputPerMillion: "0.15", outputPerMillion: "0.60" }',
      ].join('\n'),
    );
  });
  after(() => upstream?.close());

  /** Which clients created an upstream request while `call` ran. */
  async function clientsUsedBy(call: () => Promise<void>): Promise<string[]> {
    const used = new Set<string>();
    // The test's own fetch is undici too: only requests to the upstream count.
    const upstreamOrigin = new URL(upstream.baseUrl).origin;
    const listeners = Object.entries(CHANNELS).map(
      ([name, channel]) =>
        [
          channel,
          (message: unknown) => {
            const origin = (message as { request: { origin?: unknown } }).request.origin;
            if (name === 'http1' || String(origin) === upstreamOrigin) used.add(name);
          },
        ] as const,
    );
    await whileSubscribed(listeners, call);
    return [...used].sort();
  }

  // A different prompt every call, so the response cache never answers in the upstream's place.
  let counter = 0;
  async function chat(running: RunningGateway, stream: boolean): Promise<void> {
    const response = await fetch(`${running.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${running.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fake-chat', messages: [{ role: 'user', content: `which client? ${++counter}` }], stream }),
    });
    const text = await response.text();
    assert.equal(response.status, 200, text);
    assert.match(text, new RegExp(FAKE_UPSTREAM_MARKER));
  }

  for (const [setting, expected] of [
    [undefined, 'http1'],
    ['undici', 'undici'],
  ] as const) {
    test(`${setting ? `GW_UPSTREAM_CLIENT=${setting}` : 'by default'}: a call read whole and a stream both go through ${expected}`, async () => {
      const running = await startGateway({ config: { configFile, ...(setting ? { upstreamClient: setting } : {}) }, environment: { FAKE_UPSTREAM_KEY: 'k' } });
      try {
        assert.deepEqual(await clientsUsedBy(() => chat(running, false)), [expected]);
        assert.deepEqual(await clientsUsedBy(() => chat(running, true)), [expected]);
      } finally {
        await running.close();
      }
    });
  }
});
