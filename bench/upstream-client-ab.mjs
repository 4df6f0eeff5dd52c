#!/usr/bin/env node
// gw's two clients for answers read whole, side by side in one process: its own HTTP/1.1 client
// (the default) and undici (GW_UPSTREAM_CLIENT=undici). Each round sends --requests chat requests
// one after another to peerbench's mock through each client in turn (the order swapped every other
// round) and records CPU time and wall time per request; the medians over the rounds are printed.
// Run it pinned as the benchmark pins a gateway, after `npm run build`:
//
//   taskset -c 0 node --no-wasm-tier-up --no-wasm-dynamic-tiering bench/upstream-client-ab.mjs [--rounds 24] [--requests 500]
//
// (the two flags are the ones bin/gw-server starts with; docs/deployment.md says why). The mock
// is started on LOAD_CPUS (default 1), on 127.0.0.1 only, and stopped at the end.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startProcess, stopProcess, waitForListening } from './lib/processes.mjs';
import { toolSettings } from './lib/tool-fixture.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const index = argv.indexOf(`--${name}`);
  return index >= 0 ? Number(argv[index + 1]) : fallback;
};
const rounds = option('rounds', 24);
const requests = option('requests', 500);
if (!(rounds >= 2 && rounds <= 200) || !(requests >= 10 && requests <= 100_000)) {
  console.error('usage: upstream-client-ab.mjs [--rounds 2-200] [--requests 10-100000]');
  process.exit(2);
}
const { createUpstreamClient } = await import(join(root, 'dist/src/providers/http/upstream-client.js'));
const { peerDir, mockPort, loadCpus } = toolSettings(root);

const mock = startProcess({ command: process.execPath, args: [join(peerDir, 'mock-upstream.mjs'), String(mockPort)], cpus: loadCpus });
try {
  await waitForListening(mock, { port: mockPort, timeoutMs: 10_000 });
  const clients = { http1: createUpstreamClient({ upstreamClient: 'http1' }), undici: createUpstreamClient({ upstreamClient: 'undici' }) };
  const request = {
    method: 'POST',
    url: `http://127.0.0.1:${mockPort}/v1/chat/completions`,
    headers: { 'content-type': 'application/json', authorization: 'Bearer peerbench' },
    body: readFileSync(join(peerDir, 'bodies', 'chat.json'), 'utf8'),
  };
  const sendOptions = { signal: new AbortController().signal, firstByteMs: 5000, idleMs: 5000, provider: 'openai' };
  const figures = { http1: { cpuUs: [], wallUs: [] }, undici: { cpuUs: [], wallUs: [] } };
  const sendAll = async (name, count) => {
    for (let index = 0; index < count; index++) {
      const answer = await clients[name].sendBuffered(request, sendOptions);
      if (answer.statusCode !== 200 || !answer.body.includes('peerbench-mock')) throw new Error(`${name}: unexpected answer ${answer.statusCode}`);
    }
  };
  for (const name of Object.keys(clients)) await sendAll(name, requests); // warm-up
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? ['http1', 'undici'] : ['undici', 'http1']) {
      const cpuBefore = process.cpuUsage();
      const wallBefore = performance.now();
      await sendAll(name, requests);
      const cpu = process.cpuUsage(cpuBefore);
      figures[name].wallUs.push(((performance.now() - wallBefore) * 1000) / requests);
      figures[name].cpuUs.push((cpu.user + cpu.system) / requests);
    }
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)].toFixed(1);
  const better = figures.http1.wallUs.filter((value, round) => value < figures.undici.wallUs[round]).length;
  console.log(`${rounds} rounds of ${requests} requests one after another, medians per request:`);
  for (const name of ['http1', 'undici']) console.log(`  ${name.padEnd(7)} CPU ${median(figures[name].cpuUs)} µs, request to whole answer ${median(figures[name].wallUs)} µs`);
  console.log(`  http1 faster in ${better} of ${rounds} rounds`);
  await Promise.all(Object.values(clients).map((client) => client.close()));
} finally {
  await stopProcess(mock, 5000);
}
