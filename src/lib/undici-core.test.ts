import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { undiciCore } from './undici-core.js';

test('undici core: the installed undici is loaded from its parts, not the whole package', () => {
  // If this fails after an undici upgrade, the gateway still works (it fell back to the package);
  // the file paths in undici-core.ts need updating to get the lighter start back.
  assert.equal(undiciCore.loadedFrom, 'parts');
});

test('undici core: request() on an Agent answers, and its error classes are the ones it throws', async () => {
  const server = createServer((request, response) => {
    if (request.url === '/slow') return; // never answers
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ path: request.url, method: request.method }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const agent = new undiciCore.Agent({ connections: 2 });
  try {
    const answer = await undiciCore.request(agent, { origin, path: '/x?y=1', method: 'POST', body: '{}' });
    assert.equal(answer.statusCode, 200);
    assert.deepEqual(await answer.body.json(), { path: '/x?y=1', method: 'POST' });
    await assert.rejects(
      undiciCore.request(agent, { origin, path: '/slow', method: 'GET', headersTimeout: 50 }),
      (error: unknown) => error instanceof undiciCore.errors.HeadersTimeoutError,
    );
  } finally {
    await agent.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
