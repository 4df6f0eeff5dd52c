#!/usr/bin/env node
// The latency of a gateway that has just come out of a saturating burst and an idle spell, next to
// the same gateway in a steady state: what `npm run bench` meets when it measures the 500 req/s
// latency shortly after the max-throughput runs, and what a production gateway meets when traffic
// resumes after a peak. Starts peerbench's mock and a prepared embedded gateway per variant
// (pinned like the benchmark), then per round and variant: a closed-loop burst (wrk, 128
// connections), an idle spell, 8 s at a fixed rate ("after burst"), and 8 s more ("steady").
// Prints each window's p50 / p99 (send -> whole answer) and the gateway's CPU time in it. Variants
// differ by Node flags appended through GW_NODE_FLAGS (the later flag wins) and NAME=VALUE
// environment variables (bench/lib/tool-options.mjs), so one build can be compared under two
// runtime settings; the variant order alternates by round. Needs `npm run build`.
//
//   node bench/after-burst.mjs                                            # the default flags only
//   node bench/after-burst.mjs --variant old='--single-threaded'          # default vs. another setting
//   node bench/after-burst.mjs --variant trace='--trace-opt'              # counts optimising compiles too
//   options: --rounds N (3)  --idle S (20)  --rate N (500)  --seconds N (8)  --conns N (128)  --json
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { badCount, measure } from './lib/measure.mjs';
import { portOpen, startProcess, waitForListening } from './lib/processes.mjs';
import { gatewayEnvironment } from './lib/gateway-setup.mjs';
import { startToolFixture, stopStarted, toolSettings } from './lib/tool-fixture.mjs';
import { describeSettings, numberOptions, optionReader, readVariants } from './lib/tool-options.mjs';

const argv = process.argv.slice(2);
const option = optionReader(argv);
const variants = readVariants(argv);
const { rounds, idle: idleS, rate, seconds, conns } = numberOptions(option, { rounds: 3, idle: 20, rate: 500, seconds: 8, conns: 128 }, { mayBeZero: ['idle'] });
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { peerDir, mockPort, gwCpus, loadCpus } = toolSettings(root);
const firstPort = Number(process.env.BENCH_GW_PORT ?? 18991);
const resultsDir = mkdtempSync(join(tmpdir(), 'gw-after-burst-'));
const started = [];

/** Optimising compiles the gateway logged (only with --trace-opt among its flags) since `from` bytes of its log. */
function compilesSince(logFile, from) {
  const text = readFileSync(logFile, 'latin1').slice(from);
  let count = 0;
  let totalMs = 0;
  for (const match of text.matchAll(/completed compiling .*? took ([\d.]+), ([\d.]+), ([\d.]+) ms/g)) {
    count++;
    totalMs += Number(match[1]) + Number(match[2]) + Number(match[3]);
  }
  return { count, totalMs };
}

async function main() {
  const ports = variants.map((_, index) => firstPort + index);
  for (const port of [mockPort, ...ports]) if (await portOpen(port)) throw new Error(`port ${port} is in use`);
  const { state, storageFor } = await startToolFixture({ root, peerDir, resultsDir, mockPort, loadCpus, started });
  const storage = await storageFor('sqlite');
  const bodyFile = join(peerDir, 'bodies', 'chat.json');
  const headers = `Authorization: Bearer ${storage.apiKey}`;
  const settings = { peerDir, loadCpus, durationS: seconds, streamDurationS: seconds };
  const targets = [];
  for (const [index, variant] of variants.entries()) {
    const logFile = join(resultsDir, `gw-${index}.log`);
    const env = gatewayEnvironment({ ...storage, configFile: state.catalog, masterKey: state.masterKey, secret: state.secret, port: ports[index] });
    const gateway = startProcess({ command: join(root, 'bin/gw-server'), cwd: root, env: { ...env, ...variant.env, GW_NODE_FLAGS: variant.flags }, cpus: gwCpus, logFile });
    started.push(gateway);
    await waitForListening(gateway, { port: ports[index] });
    const url = `http://127.0.0.1:${ports[index]}/v1/chat/completions`;
    targets.push({ variant, gateway, logFile, url });
  }
  const window = async (target) => {
    const logAt = statSync(target.logFile).size;
    const outcome = await measure({ kind: 'rate', url: target.url, bodyFile, headers, marker: 'peerbench-mock', rate }, { ...settings, gatewayPid: target.gateway.pid });
    const latency = outcome.result?.latency_ms;
    if (!latency || badCount('rate', outcome.result) > 0) throw new Error(`${target.variant.name}: the window failed: ${JSON.stringify(outcome.result)}`);
    return { p50: latency.p50, p99: latency.p99, cpuMs: outcome.gwCpuS * 1000, compiles: compilesSince(target.logFile, logAt) };
  };
  for (const target of targets) {
    console.error(`${target.variant.name}: warming up`);
    await measure({ kind: 'thr', url: target.url, bodyFile, headers, conns: 32 }, { ...settings, durationS: 3 });
  }
  const results = targets.map(() => []);
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) {
      console.error(`round ${round + 1}: ${target.variant.name}: burst of ${seconds} s at ${conns} connections, ${idleS} s idle, then ${rate} req/s`);
      await measure({ kind: 'thr', url: target.url, bodyFile, headers, conns }, settings);
      await sleep(idleS * 1000);
      const afterBurst = await window(target);
      const steady = await window(target);
      results[targets.indexOf(target)].push({ afterBurst, steady });
    }
  }
  if (argv.includes('--json')) {
    console.log(JSON.stringify({ rate, seconds, idleS, conns, variants: variants.map((variant, index) => ({ ...variant, rounds: results[index] })) }, null, 2));
    return;
  }
  const traced = variants.some((variant) => variant.flags.includes('--trace-opt'));
  const cell = (figures) =>
    `p50 ${figures.p50.toFixed(2)}  p99 ${figures.p99.toFixed(2)} ms  cpu ${Math.round(figures.cpuMs)} ms` +
    (traced ? `  compiles ${figures.compiles.count} (${figures.compiles.totalMs.toFixed(0)} ms)` : '');
  console.log(`${rate} req/s for ${seconds} s right after a ${seconds} s burst at ${conns} connections and ${idleS} s idle ("after burst"), then ${seconds} s more ("steady")`);
  for (const [index, variant] of variants.entries()) {
    const settingsText = describeSettings(variant);
    console.log(`${variant.name}${settingsText ? ` (${settingsText})` : ''}`);
    for (const [round, figures] of results[index].entries()) {
      console.log(`  round ${round + 1}  after burst: ${cell(figures.afterBurst)}   steady: ${cell(figures.steady)}`);
    }
  }
}

main()
  .catch((error) => {
    console.error(`after-burst FAILED: ${error.stack ?? error.message}`);
    process.exitCode = 1;
  })
  .finally(() => stopStarted(started));
