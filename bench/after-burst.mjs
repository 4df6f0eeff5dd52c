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
import { readFileSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { badCount, measure } from './lib/measure.mjs';
import { prepareVariantRun, startVariantGateways, stopStarted, variantToolSetup } from './lib/tool-fixture.mjs';
import { describeSettings } from './lib/tool-options.mjs';

const setup = variantToolSetup(
  import.meta.url,
  { rounds: 3, idle: 20, rate: 500, seconds: 8, conns: 128 },
  { mayBeZero: ['idle'] },
);
const { rounds, idle: idleS, rate, seconds, conns } = setup.numbers;
const { argv, variants, root, gwCpus, firstPort, resultsDir, started } = setup;

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
  const { state, storage, bodyFile, headers, settings } = await prepareVariantRun(setup, seconds);
  const targets = await startVariantGateways({ root, variants, storage, state, firstPort, gwCpus, resultsDir, started });
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
