#!/usr/bin/env node
// Does the gateway catch up after a stall at a fixed rate, or does the backlog make each call dearer
// until it saturates? A host that stops the gateway for a moment (a hypervisor's pause, a long
// collection, another process on its CPU) leaves the calls of that moment waiting; they then arrive
// in one burst. The gateway should work the burst off with the CPU it has spare and be back at its
// usual cost a call within a second or two. This tool stops the gateway (SIGSTOP) for --stall-ms
// once a window is --at seconds in, lets it run again (SIGCONT), and prints, per half second from a
// second before the stall, the calls the gateway answered (its /metrics), its CPU per call answered
// and, in Postgres + Redis mode, the commands Redis ran per call answered (scripts' own commands
// included): a call that costs more after the stall than before it is the sign of work that grows
// with the backlog. Then the window's client p50 / p99 and how many calls a second were answered
// (fewer than the rate: saturated).
// Starts peerbench's mock and a prepared gateway per variant (pinned like the benchmark), all on one
// database; the variant order alternates by round. Variants as in
// bench/after-burst.mjs (GW_SERVER_ENTRY=<other build>/dist/server/main.js compares builds).
// Needs `npm run build`.
//
//   node bench/stall-recovery.mjs                                # Postgres + Redis, 2,000 req/s, 200 ms stall
//   node bench/stall-recovery.mjs --mode sqlite --stall-ms 500
//   options: --mode postgres|sqlite (postgres)  --rounds N (2)  --rate N (2000)  --seconds N (12)
//            --at N (4)  --stall-ms N (200)  --json
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { badCount, measure } from './lib/measure.mjs';
import { cpuSeconds } from './lib/processes.mjs';
import { prepareVariantRun, startVariantGateways, stopStarted, variantToolSetup, warmUpVariants } from './lib/tool-fixture.mjs';
import { describeSettings, optionReader } from './lib/tool-options.mjs';

const setup = variantToolSetup(import.meta.url, { rounds: 2, rate: 2000, seconds: 12, at: 4, 'stall-ms': 200 });
const { rounds, rate, seconds, at } = setup.numbers;
const stallMs = setup.numbers['stall-ms'];
const mode = optionReader(setup.argv)('mode', 'postgres');
const { argv, variants, root, gwCpus, firstPort, resultsDir, started } = setup;
if (mode !== 'postgres' && mode !== 'sqlite') {
  console.error('--mode wants postgres or sqlite');
  process.exit(2);
}
if (at + 1 >= seconds) {
  console.error('--at must leave at least a second of the window after the stall');
  process.exit(2);
}
const SAMPLE_MS = 500;

/** Redis's count of commands run so far (INFO stats), on a connection kept open for the run. */
function redisCommandCounter(url) {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  return {
    read: async () => Number(/total_commands_processed:(\d+)/.exec(await redis.info('stats'))?.[1] ?? NaN),
    close: () => redis.disconnect(),
  };
}

/** The gateway's count of answered calls (the sum of gw_requests_total), read from its /metrics. */
async function answeredCalls(baseUrl, masterKey) {
  const response = await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${masterKey}` } });
  const text = await response.text();
  if (!response.ok) throw new Error(`GET /metrics answered ${response.status}: ${text.slice(0, 200)}`);
  let total = 0;
  for (const line of text.split('\n')) if (line.startsWith('gw_requests_total{')) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  return total;
}

/** Per half second while `until` is open: calls answered, the gateway's CPU seconds and Redis's commands (or null). */
async function sampleWhile({ pid, baseUrl, masterKey }, redis, until) {
  const read = async () => ({ atMs: Date.now(), cpuS: cpuSeconds(pid), calls: await answeredCalls(baseUrl, masterKey), commands: redis ? await redis.read() : null });
  const samples = [];
  let open = true;
  until.finally(() => (open = false));
  let before = await read();
  while (open) {
    await sleep(SAMPLE_MS);
    const after = await read();
    const calls = after.calls - before.calls;
    samples.push({
      atMs: after.atMs,
      callsPerSecond: calls / ((after.atMs - before.atMs) / 1000),
      cpuPct: ((after.cpuS - before.cpuS) / ((after.atMs - before.atMs) / 1000)) * 100,
      cpuUsPerCall: calls > 0 ? ((after.cpuS - before.cpuS) * 1e6) / calls : null,
      commandsPerCall: redis && calls > 0 ? (after.commands - before.commands) / calls : null,
    });
    before = after;
  }
  return samples;
}

async function main() {
  // The variants share one database, as instances of one deployment would; they run in turn, and
  // an idle instance's claims are given back within seconds.
  const { state, storage, bodyFile, headers, settings } = await prepareVariantRun(setup, seconds, { mode });
  const targets = await startVariantGateways({ root, variants, storage, state, firstPort, gwCpus, resultsDir, started });
  const redis = mode === 'postgres' ? redisCommandCounter(storage.redisUrl) : null;
  const rateSpec = (target) => ({ kind: 'rate', url: target.url, bodyFile, headers, marker: 'peerbench-mock', rate });
  await warmUpVariants(targets, { bodyFile, headers, settings }, rateSpec);
  const results = targets.map(() => []);
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) {
      const pid = target.gateway.pid;
      console.error(`round ${round + 1}: ${target.variant.name}: ${rate} req/s for ${seconds} s, stopped for ${stallMs} ms at ${at} s`);
      const windowStartedAt = Date.now();
      const measuring = measure(rateSpec(target), { ...settings, gatewayPid: pid });
      const sampling = sampleWhile({ pid, baseUrl: target.url.replace(/\/v1\/.*$/, ''), masterKey: state.masterKey }, redis, measuring);
      // The loadgen warms up for a second before its window.
      await sleep((1 + at) * 1000);
      const stoppedAt = Date.now();
      process.kill(pid, 'SIGSTOP');
      try {
        await sleep(stallMs);
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      const outcome = await measuring;
      const samples = await sampling;
      const latency = outcome.result?.latency_ms;
      if (!latency) throw new Error(`${target.variant.name}: the window failed: ${JSON.stringify(outcome.result)}`);
      const done = outcome.result.achieved_rate;
      results[targets.indexOf(target)].push({
        p50: latency.p50,
        p99: latency.p99,
        bad: badCount('rate', outcome.result),
        answeredPerSecond: done,
        cpuPct: outcome.gwCpuPct,
        stoppedAtS: (stoppedAt - windowStartedAt) / 1000,
        samples: samples.map(({ atMs, ...sample }) => ({ atS: (atMs - windowStartedAt) / 1000, ...sample })),
      });
    }
  }
  redis?.close();
  if (argv.includes('--json')) {
    console.log(JSON.stringify({ mode, rate, seconds, at, stallMs, variants: variants.map((variant, index) => ({ ...variant, windows: results[index] })) }, null, 2));
    return;
  }
  console.log(`${mode}: ${rate} req/s, windows of ${seconds} s (after a 1 s warm-up), the gateway stopped for ${stallMs} ms ${at} s in`);
  const perCall = (value, digits) => (value === null ? '-' : value.toFixed(digits));
  for (const [index, variant] of variants.entries()) {
    const settingsText = describeSettings(variant);
    console.log(`${variant.name}${settingsText ? ` (${settingsText})` : ''}`);
    for (const window of results[index]) {
      console.log(`  p50 ${window.p50.toFixed(2)} p99 ${window.p99.toFixed(2)} ms, ${Number(window.answeredPerSecond).toFixed(0)} answered/s, cpu ${window.cpuPct}%, bad ${window.bad}`);
      const before = window.samples.filter((sample) => sample.atS < window.stoppedAtS && sample.cpuUsPerCall !== null);
      const usual = before.reduce((sum, sample) => sum + sample.cpuUsPerCall, 0) / Math.max(1, before.length);
      console.log(`    before the stall: ${usual.toFixed(0)} µs of CPU a call; from a second before it, per ${SAMPLE_MS} ms: answered/s, CPU %, µs a call${redis ? ', Redis commands a call' : ''}`);
      for (const sample of window.samples) {
        if (sample.atS < window.stoppedAtS - 1) continue;
        const cells = [`${sample.atS.toFixed(1)} s`, sample.callsPerSecond.toFixed(0), `${sample.cpuPct.toFixed(0)}%`, perCall(sample.cpuUsPerCall, 0)];
        if (redis) cells.push(perCall(sample.commandsPerCall, 1));
        console.log(`    ${cells.map((cell) => cell.padStart(8)).join('')}`);
      }
    }
  }
}

main()
  .catch((error) => {
    console.error(`stall-recovery FAILED: ${error.stack ?? error.message}`);
    process.exitCode = 1;
  })
  .finally(() => stopStarted(started));
