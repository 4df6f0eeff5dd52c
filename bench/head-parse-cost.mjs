#!/usr/bin/env node
// What reading an HTTP head costs the gateway, per head, warm: the edge's request head
// (src/http/edge/request-head.ts, a chat call as Node's http client sends it) and the upstream
// client's response head (src/providers/http/http1-response-reader.ts, an answer as a Node
// server sends it). With --baseline DIR, the same for another build (a worktree with `npm run
// build` done), the two alternating round by round; medians over the rounds. Run it on one CPU
// (`taskset -c 0 node bench/head-parse-cost.mjs`). Needs `npm run build`.
//
//   node bench/head-parse-cost.mjs [--baseline DIR] [--rounds 5] [--iterations 200000] [--json]
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './lib/report-figures.mjs';
import { optionReader } from './lib/tool-options.mjs';

const argv = process.argv.slice(2);
const option = optionReader(argv);
const rounds = Number(option('rounds', 5));
const iterations = Number(option('iterations', 200_000));
const baselineDir = option('baseline', undefined);
const withinRange = (value, low, high) => Number.isInteger(value) && value >= low && value <= high;
if (!withinRange(rounds, 1, 50) || !withinRange(iterations, 1_000, 10_000_000) || (argv.includes('--baseline') && !baselineDir)) {
  console.error('usage: head-parse-cost.mjs [--baseline DIR] [--rounds 1-50] [--iterations 1000-10000000] [--json]');
  process.exit(2);
}

const REQUEST_HEAD = [
  'POST /v1/chat/completions HTTP/1.1',
  'content-type: application/json',
  'content-length: 262',
  'authorization: Bearer sk-gw-0123456789abcdefghijklmnopqrstuvwxyzABCD',
  'Host: 127.0.0.1:4000',
  'Connection: keep-alive',
].join('\r\n');
const RESPONSE = Buffer.from(
  ['HTTP/1.1 200 OK', 'Content-Type: application/json', 'Content-Length: 2', 'Date: Sun, 29 Nov 2026 20:41:30 GMT', 'Connection: keep-alive', 'Keep-Alive: timeout=5', '', '{}'].join('\r\n'),
  'latin1',
);
const RULES = { servesPath: (path) => path === '/v1/chat/completions', bodyLimitBytes: 1_000_000 };

async function loadBuild(dir) {
  const { readRequestHead } = await import(join(dir, 'dist/src/http/edge/request-head.js'));
  const { Http1ResponseReader } = await import(join(dir, 'dist/src/providers/http/http1-response-reader.js'));
  const request = () => {
    if (readRequestHead(REQUEST_HEAD, RULES).kind !== 'serve') throw new Error(`${dir}: the request head was not served`);
  };
  const response = () => {
    const reader = new Http1ResponseReader('POST');
    if (!reader.push(RESPONSE) || reader.statusCode !== 200) throw new Error(`${dir}: the response was not read`);
  };
  return { request, response };
}

/** Nanoseconds per call of `work`, after a warm-up of a tenth as many calls. */
function timePerCall(work) {
  for (let index = 0; index < iterations / 10; index++) work();
  const startedAt = process.hrtime.bigint();
  for (let index = 0; index < iterations; index++) work();
  return Number(process.hrtime.bigint() - startedAt) / iterations;
}

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const builds = [['this build', await loadBuild(root)]];
if (baselineDir) builds.push(['baseline', await loadBuild(resolve(baselineDir))]);
const samples = new Map(builds.map(([label]) => [label, { request: [], response: [] }]));
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? builds : [...builds].reverse();
  for (const [label, build] of order) {
    samples.get(label).request.push(timePerCall(build.request));
    samples.get(label).response.push(timePerCall(build.response));
  }
}
const figures = Object.fromEntries([...samples].map(([label, { request, response }]) => [label, { requestHeadNs: median(request), responseHeadNs: median(response) }]));
if (argv.includes('--json')) {
  console.log(JSON.stringify({ rounds, iterations, figures }, null, 2));
} else {
  console.log(`ns a head, median of ${rounds} rounds of ${iterations} (warm)`);
  console.log(`${'build'.padEnd(12)} ${'request head'.padStart(13)} ${'response head'.padStart(14)}`);
  for (const [label, figure] of Object.entries(figures)) {
    console.log(`${label.padEnd(12)} ${figure.requestHeadNs.toFixed(0).padStart(13)} ${figure.responseHeadNs.toFixed(0).padStart(14)}`);
  }
}
