import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import { whileSubscribed } from '../helpers/diagnostics-channels.js';
import { startGateway, type RunningGateway } from '../helpers/start-gateway.js';

// GW_HTTP_EDGE as the gateway wires it: inference calls are served by gw's HTTP edge by default
// and by node:http with `node`. Which one read a call shows on the diagnostics channel each
// publishes as it starts serving a request.

const CHANNELS = { edge: 'gw:http:request:start', node: 'http.server.request.start' } as const;

async function readersOf(call: () => Promise<void>): Promise<string[]> {
  const used = new Set<string>();
  await whileSubscribed(
    Object.entries(CHANNELS).map(([name, channel]) => [channel, () => used.add(name)] as const),
    call,
  );
  return [...used].sort();
}

async function chat(running: RunningGateway, stream: boolean): Promise<void> {
  const response = await fetch(`${running.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${running.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'which reader?' }], stream }),
  });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  if (stream) assert.match(text, /data: \[DONE\]/);
}

describe('GW_HTTP_EDGE, as the gateway wires it', () => {
  for (const [setting, expected] of [
    [undefined, 'edge'],
    ['node', 'node'],
  ] as const) {
    test(`${setting ? `GW_HTTP_EDGE=${setting}` : 'by default'}: a call answered whole and a stream are both read by ${expected === 'edge' ? "gw's HTTP edge" : 'node:http'}; management calls by node:http`, async () => {
      const running = await startGateway({ config: setting ? { httpEdge: setting } : {} });
      try {
        assert.deepEqual(await readersOf(() => chat(running, false)), [expected]);
        assert.deepEqual(await readersOf(() => chat(running, true)), [expected]);
        const models = async () => {
          const response = await fetch(`${running.baseURL}/models`, { headers: { authorization: `Bearer ${running.apiKey}` } });
          assert.equal(response.status, 200);
          await response.text();
        };
        assert.deepEqual(await readersOf(models), ['node']);
      } finally {
        await running.close();
      }
    });
  }

  test("stopping the gateway closes the edge's idle keep-alive connections instead of waiting for them", async () => {
    const running = await startGateway();
    const socket = connect(Number(new URL(running.url).port), '127.0.0.1');
    await once(socket, 'connect');
    const body = JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    socket.on('data', (chunk) => (text += chunk));
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${running.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    while (!/\r\n\r\n\{.*\}$/s.test(text)) await once(socket, 'data');
    assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(text, /\r\nconnection: keep-alive\r\n/);
    const closed = once(socket, 'close');
    await running.close();
    await closed;
  });
});
