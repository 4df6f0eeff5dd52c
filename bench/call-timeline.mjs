#!/usr/bin/env node
// Where a call's time goes, step by step: starts peerbench's mock and a prepared gateway for each
// storage mode (embedded defaults; Postgres + Redis on BENCH_POSTGRES_URL / BENCH_REDIS_URL, a
// fresh schema), pinned like the benchmark, with bench/lib/call-timeline-probe.mjs preloaded.
// After a warm-up it sends calls one at a time (a stream, or chat calls 20 ms apart: --pace) and prints
// the median of each step in ms after the gateway saw the request, the modes side by side. The
// gateway's steps come from its `gw:call:step` diagnostics channel (docs/pipeline.md). Needs
// `npm run build` first.
//
//   node bench/call-timeline.mjs                       # streamed chat, both modes, 10 s each
//   node bench/call-timeline.mjs --kind chat           # non-streamed chat
//   node bench/call-timeline.mjs --kind chat --pace 500
//                                                      # the same 500 a second: a warmer CPU; calls
//                                                      # that overlap (a few in ten) blur their steps
//   node bench/call-timeline.mjs --mode sqlite         # one mode only (sqlite | postgres | both)
//   node bench/call-timeline.mjs --rate 500            # chat calls at 500 req/s, open loop: where the tail goes
//   node bench/call-timeline.mjs --rate 500 --mode sqlite --bare --rounds 4
//                                                      # the same beside bench/bare-node-proxy.mjs, in turns
//   options: --seconds N  --json
//
// With --rate the calls overlap, so instead of the median of every step it prints percentiles of
// the spans of a call (bench/lib/call-spans-probe.mjs): the gateway's own work before and after the
// upstream exchange, the wait to write the upstream request, and the upstream's answer time, next
// to the load generator's own p50/p99 of the whole answer. `--bare` adds the bare Node proxy
// (node:http + undici, no gateway work: the floor under a gateway built on them) with the same probe, and
// `--rounds N` measures every target N times in turn, pooling each one's calls, so a host whose
// speed drifts from minute to minute weighs on all targets alike.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measure } from './lib/measure.mjs';
import { portOpen, startProcess, waitForListening } from './lib/processes.mjs';
import { gatewayEnvironment } from './lib/gateway-setup.mjs';
import { askProbe, startToolFixture, stopStarted, toolSettings } from './lib/tool-fixture.mjs';
import { alignTimelines, summarizeTimeline } from './lib/call-timeline-summary.mjs';
import { summarizeSpans } from './lib/call-spans-summary.mjs';
import { median } from './lib/report-figures.mjs';

const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const index = argv.indexOf(`--${name}`);
  return index >= 0 && argv[index + 1] !== undefined ? argv[index + 1] : fallback;
};
const rate = argv.includes('--rate') ? Number(option('rate', NaN)) : undefined;
const bare = argv.includes('--bare');
const rounds = Number(option('rounds', 1));
// One-at-a-time chat calls a second (every step is credited to the latest request, so calls should seldom overlap).
const pace = Number(option('pace', 50));
const kind = option('kind', rate === undefined ? 'stream' : 'chat');
const modeOption = option('mode', 'both');
const rateOnly = (bare || argv.includes('--rounds')) && rate === undefined;
if (
  !['chat', 'stream'].includes(kind) ||
  !['sqlite', 'postgres', 'both'].includes(modeOption) ||
  (rate !== undefined && (!(rate > 0 && rate <= 5000) || kind !== 'chat')) ||
  rateOnly ||
  !(Number.isInteger(rounds) && rounds >= 1 && rounds <= 20) ||
  !(pace > 0 && pace <= 1000) ||
  (argv.includes('--pace') && (rate !== undefined || kind !== 'chat'))
) {
  console.error('usage: call-timeline.mjs [--kind stream|chat | --rate N (1-5000, chat) [--bare] [--rounds N (1-20)] | --kind chat --pace N (1-1000)] [--mode sqlite|postgres|both] [--seconds N] [--json]');
  process.exit(2);
}
const modes = modeOption === 'both' ? ['sqlite', 'postgres'] : [modeOption];
const seconds = Number(option('seconds', 10));
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { peerDir, mockPort, gwCpus, loadCpus } = toolSettings(root);
const ports = { sqlite: Number(process.env.BENCH_GW_PORT ?? 18991), postgres: Number(process.env.BENCH_GW_PG_PORT ?? 18993), bare: Number(process.env.BENCH_FLOOR_PORT ?? 18992) };
const labels = { sqlite: 'embedded', postgres: 'Postgres + Redis', bare: 'bare Node proxy' };
const resultsDir = mkdtempSync(join(tmpdir(), 'gw-call-timeline-'));
const started = [];

async function main() {
  for (const port of [mockPort, ...modes.map((mode) => ports[mode]), ...(bare ? [ports.bare] : [])]) if (await portOpen(port)) throw new Error(`port ${port} is in use`);
  const { state, storageFor } = await startToolFixture({ root, peerDir, resultsDir, mockPort, loadCpus, started });

  const gateways = {};
  for (const mode of modes) {
    const storage = await storageFor(mode);
    const output = join(resultsDir, `timeline-${mode}.json`);
    const env = gatewayEnvironment({ ...storage, configFile: state.catalog, masterKey: state.masterKey, secret: state.secret, port: ports[mode] });
    const gateway = startProcess({
      command: join(root, 'bin/gw-server'),
      cwd: root,
      env:
        rate === undefined
          ? { ...env, GW_NODE_FLAGS: `--import ${join(root, 'bench/lib/call-timeline-probe.mjs')}`, GW_CALL_TIMELINE_OUT: output }
          : { ...env, GW_NODE_FLAGS: `--import ${join(root, 'bench/lib/call-spans-probe.mjs')}`, GW_CALL_SPANS_OUT: output },
      cpus: gwCpus,
      logFile: join(resultsDir, `gw-${mode}.log`),
    });
    started.push(gateway);
    await waitForListening(gateway, { port: ports[mode] });
    gateways[mode] = { gateway, output, url: `http://127.0.0.1:${ports[mode]}/v1/chat/completions`, headers: `Authorization: Bearer ${storage.apiKey}` };
  }

  if (bare) {
    const output = join(resultsDir, 'timeline-bare.json');
    const proxy = startProcess({
      command: process.execPath,
      args: ['--import', join(root, 'bench/lib/call-spans-probe.mjs'), join(root, 'bench/bare-node-proxy.mjs'), '--port', String(ports.bare), '--upstream', `http://127.0.0.1:${mockPort}`, '--seconds', '7200'],
      cwd: root,
      env: { ...process.env, GW_CALL_SPANS_OUT: output },
      cpus: gwCpus,
      logFile: join(resultsDir, 'bare-proxy.log'),
    });
    started.push(proxy);
    await waitForListening(proxy, { port: ports.bare });
    gateways.bare = { gateway: proxy, output, url: `http://127.0.0.1:${ports.bare}/v1/chat/completions`, headers: '' };
  }

  const settings = { peerDir, loadCpus, durationS: seconds, streamDurationS: seconds };
  if (rate !== undefined) return spansAtRate(gateways, settings);
  const oneAtATime = (target) =>
    kind === 'chat'
      ? { kind: 'rate', url: target.url, bodyFile: join(peerDir, 'bodies', 'chat.json'), headers: target.headers, marker: 'peerbench-mock', rate: pace }
      : { kind: 'stream', url: target.url, bodyFile: join(peerDir, 'bodies', 'chat-stream.json'), headers: target.headers, marker: 'peerbench-mock', concurrency: 1, minEvents: 2 };
  const timelines = {};
  const clientFigures = {};
  for (const mode of modes) {
    const target = gateways[mode];
    console.error(`${labels[mode]}: warming up`);
    // Compiled code and pools in place before anything is counted; the warm-up's calls are dropped.
    await measure({ kind: 'thr', url: target.url, bodyFile: join(peerDir, 'bodies', 'chat.json'), headers: target.headers, conns: 32 }, { ...settings, durationS: 3 });
    await measure(oneAtATime(target), { ...settings, durationS: 2, streamDurationS: 2 });
    await askProbe(target.gateway.pid, target.output);
    console.error(`${labels[mode]}: ${kind === 'chat' ? `chat calls ${pace} a second` : 'one stream at a time'} for ${seconds} s`);
    const outcome = await measure(oneAtATime(target), settings);
    const calls = await askProbe(target.gateway.pid, target.output);
    if (calls.length === 0) throw new Error(`${labels[mode]}: no calls were recorded (${JSON.stringify(outcome.result)})`);
    // The load generator's own warm-up second is recorded too: drop the first fifth.
    timelines[labels[mode]] = summarizeTimeline(calls.slice(Math.floor(calls.length / 5)));
    const latency = kind === 'chat' ? outcome.result?.latency_ms : outcome.result?.ttfb_ms;
    clientFigures[labels[mode]] = latency?.p50;
  }
  const aligned = alignTimelines(timelines);
  if (argv.includes('--json')) {
    console.log(JSON.stringify({ kind, seconds, timelines, clientP50Ms: clientFigures }, null, 2));
    return;
  }
  const width = Math.max(...aligned.rows.map((row) => row.step.length), 24);
  const cell = (value) => (value === undefined ? '–' : value.toFixed(3)).padStart(18);
  console.log(`${kind === 'chat' ? 'Chat call' : 'Streamed call'}, median ms after the gateway saw the request (${modes.map((mode) => `${labels[mode]} ${timelines[labels[mode]][0]?.calls ?? 0} calls`).join(', ')})`);
  console.log(`${'step'.padEnd(width)}${aligned.labels.map((label) => label.padStart(18)).join('')}`);
  for (const row of aligned.rows) console.log(`${row.step.padEnd(width)}${aligned.labels.map((label) => cell(row.byLabel[label])).join('')}`);
  const clientStep = kind === 'chat' ? 'client: whole answer p50' : 'client: first event p50';
  console.log(`${clientStep.padEnd(width)}${aligned.labels.map((label) => cell(clientFigures[label])).join('')}`);
}

/**
 * --rate: chat calls at a fixed rate through each target (each mode's gateway, and the bare proxy
 * with --bare), `rounds` times in turn, then the percentiles of each span of a call, every target's
 * calls of all rounds pooled.
 */
async function spansAtRate(gateways, settings) {
  const targets = Object.keys(gateways);
  const specFor = (target) => ({ kind: 'rate', url: target.url, bodyFile: join(peerDir, 'bodies', 'chat.json'), headers: target.headers, marker: 'peerbench-mock', rate });
  for (const name of targets) {
    const target = gateways[name];
    console.error(`${labels[name]}: warming up`);
    await measure({ kind: 'thr', url: target.url, bodyFile: join(peerDir, 'bodies', 'chat.json'), headers: target.headers, conns: 32 }, { ...settings, durationS: 3 });
    await measure(specFor(target), { ...settings, durationS: 2 });
    await askProbe(target.gateway.pid, target.output);
  }
  const pooled = Object.fromEntries(targets.map((name) => [name, { calls: [], client: [], unmatched: 0 }]));
  for (let round = 1; round <= rounds; round++) {
    for (const name of round % 2 === 1 ? targets : [...targets].reverse()) {
      const target = gateways[name];
      console.error(`${labels[name]}: ${rate} chat calls a second for ${seconds} s${rounds > 1 ? ` (round ${round} of ${rounds})` : ''}`);
      const outcome = await measure(specFor(target), settings);
      const recorded = await askProbe(target.gateway.pid, target.output);
      // The load generator's own warm-up second is recorded too: only calls after it count.
      const firstSeen = Math.min(...recorded.calls.map((call) => call.seen));
      const calls = recorded.calls.filter((call) => call.seen >= firstSeen + 1000);
      if (calls.length === 0) throw new Error(`${labels[name]}: no calls were recorded (${JSON.stringify(outcome.result)})`);
      pooled[name].calls.push(...calls);
      pooled[name].unmatched += recorded.unmatched;
      if (outcome.result?.latency_ms) pooled[name].client.push(outcome.result.latency_ms);
    }
  }
  const results = {};
  for (const name of targets) {
    const { calls, client, unmatched } = pooled[name];
    // The client's figures are the load generator's own percentiles: with several rounds, their medians.
    const clientFigure = (field) => median(client.map((latency) => latency[field])) ?? undefined;
    results[labels[name]] = {
      spans: summarizeSpans(calls),
      client: { p50: clientFigure('p50'), p90: clientFigure('p90'), p99: clientFigure('p99'), max: clientFigure('max') },
      secondUpstreamRequests: unmatched,
    };
  }
  if (argv.includes('--json')) {
    console.log(JSON.stringify({ rate, seconds, results }, null, 2));
    return;
  }
  const figure = (value) => (value === undefined ? '–' : value.toFixed(3));
  for (const [label, result] of Object.entries(results)) {
    const duration = rounds > 1 ? `${rounds} rounds of ${seconds} s` : `${seconds} s`;
    console.log(`${label}: chat calls at ${rate} req/s for ${duration}, ms (${result.spans[0].calls} calls that reached the upstream)`);
    console.log(`${'span'.padEnd(42)}${['p50', 'p90', 'p99', 'max'].map((name) => name.padStart(10)).join('')}`);
    for (const row of result.spans) console.log(`${row.span.padEnd(42)}${[row.p50, row.p90, row.p99, row.max].map((value) => figure(value).padStart(10)).join('')}`);
    const client = result.client ?? {};
    console.log(`${(rounds > 1 ? 'client: send → whole answer (round median)' : 'client: send → whole answer').padEnd(42)}${[client.p50, client.p90, client.p99, client.max].map((value) => figure(value).padStart(10)).join('')}`);
    console.log('');
  }
}

main()
  .catch((error) => {
    console.error(`call-timeline FAILED: ${error.stack ?? error.message}`);
    process.exitCode = 1;
  })
  .finally(() => stopStarted(started));
