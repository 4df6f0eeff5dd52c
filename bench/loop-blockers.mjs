#!/usr/bin/env node
// What holds the gateway's event loop besides the requests themselves, at a fixed rate: the
// batched inserts' SQLite transactions (commit included), statements prepared, and garbage-
// collection pauses, each timed inside the gateway (bench/lib/loop-blockers-probe.mjs), with the
// client's p50 / p99 of the same window. A request that arrives during one of them waits for the
// rest of it, so their count and length are what the latency tail is made of. Starts peerbench's
// mock and a prepared embedded gateway per variant (pinned like the benchmark); the variant order
// alternates by round. Variants as in bench/after-burst.mjs: Node flags and NAME=VALUE settings.
// Needs `npm run build`.
//
//   node bench/loop-blockers.mjs                                                  # the defaults only
//   node bench/loop-blockers.mjs --variant window200ms='GW_LOG_FLUSH_INTERVAL_MS=200'
//   options: --rounds N (2)  --rate N (500)  --seconds N (10)  --json
import { join } from 'node:path';
import { runProbedRateWindows, stopStarted, variantToolSetup } from './lib/tool-fixture.mjs';
import { describeSettings } from './lib/tool-options.mjs';
import { summarizeBlockers } from './lib/loop-blockers-summary.mjs';

const setup = variantToolSetup(import.meta.url, { rounds: 2, rate: 500, seconds: 10 });
const { rounds, rate, seconds } = setup.numbers;
const { argv, variants, root, resultsDir, started } = setup;

async function main() {
  const outputOf = (index) => join(resultsDir, `blockers-${index}.json`);
  const windows = await runProbedRateWindows(setup, {
    rounds,
    rate,
    seconds,
    outputOf,
    probe: (index) => ({ flags: `--import ${join(root, 'bench/lib/loop-blockers-probe.mjs')}`, env: { GW_LOOP_BLOCKERS_OUT: outputOf(index) } }),
  });
  const results = windows.map((variantWindows) => ({
    events: variantWindows.flatMap((window) => window.recorded),
    windows: variantWindows.map(({ outcome }) => ({ p50: outcome.result.latency_ms.p50, p99: outcome.result.latency_ms.p99, cpuMs: Math.round(outcome.gwCpuS * 1000) })),
  }));
  // The loadgen's window includes its one-second warm-up; the probe saw all of it.
  const windowSeconds = rounds * (seconds + 1);
  const summaries = results.map((result) => summarizeBlockers(result.events, windowSeconds));
  if (argv.includes('--json')) {
    console.log(JSON.stringify({ rate, seconds, variants: variants.map((variant, index) => ({ ...variant, windows: results[index].windows, blockers: summaries[index] })) }, null, 2));
    return;
  }
  console.log(`${rate} req/s, ${rounds} windows of ${seconds} s per variant; per kind: how many a second, their p50 / p99 / max, their time a second, and how many a second ran over 0.5 and 1 ms`);
  for (const [index, variant] of variants.entries()) {
    const settingsText = describeSettings(variant);
    console.log(`${variant.name}${settingsText ? ` (${settingsText})` : ''}`);
    console.log(`  client: ${results[index].windows.map((window) => `p50 ${window.p50.toFixed(2)} p99 ${window.p99.toFixed(2)} ms (cpu ${window.cpuMs} ms)`).join(';  ')}`);
    console.log(`  ${'kind'.padEnd(26)}${['a second', 'p50 ms', 'p99 ms', 'max ms', 'ms a s', '>0.5/s', '>1/s'].map((head) => head.padStart(9)).join('')}`);
    for (const row of summaries[index]) {
      const cells = [row.perSecond.toFixed(1), row.p50.toFixed(2), row.p99.toFixed(2), row.max.toFixed(2), row.msPerSecond.toFixed(1), row.overHalfMsPerSecond.toFixed(1), row.overOneMsPerSecond.toFixed(1)];
      console.log(`  ${row.kind.padEnd(26)}${cells.map((cell) => cell.padStart(9)).join('')}`);
    }
  }
}

main()
  .catch((error) => {
    console.error(`loop-blockers FAILED: ${error.stack ?? error.message}`);
    process.exitCode = 1;
  })
  .finally(() => stopStarted(started));
