#!/usr/bin/env node
// How many promises, timers, nextTick callbacks and other async resources a chat call makes the
// gateway create, counted inside it (bench/lib/async-resources-probe.mjs, an async_hooks init hook)
// over windows at a fixed rate, divided by the calls of the window. Each is a small allocation and,
// for a promise, a microtask turn; at 500 req/s a call runs cold, and such steps are what its time
// is made of once nothing larger stands out. `--sites` also names the file that created them
// (sampled), and runs the unbundled build (dist/src) so that the files are the sources' own. Starts
// peerbench's mock and a prepared embedded gateway per variant (pinned like the benchmark);
// variants as in bench/after-burst.mjs. The hook slows the gateway: read the counts, not the latency.
// Needs `npm run build`.
//
//   node bench/async-resources.mjs                     # counts per call, the defaults
//   node bench/async-resources.mjs --sites             # and where they come from
//   options: --rounds N (1)  --rate N (500)  --seconds N (8)  --json
import { join } from 'node:path';
import { runProbedRateWindows, stopStarted, variantToolSetup } from './lib/tool-fixture.mjs';
import { describeSettings } from './lib/tool-options.mjs';
import { perCallCounts, perCallSites } from './lib/async-resources-summary.mjs';

const setup = variantToolSetup(import.meta.url, { rounds: 1, rate: 500, seconds: 8 });
const { rounds, rate, seconds } = setup.numbers;
const { argv, variants, root, resultsDir, started } = setup;
const withSites = argv.includes('--sites');
// The loadgen's one-second warm-up is sent at the rate too, and the probe counts it.
const WARMUP_S = 1;

async function main() {
  const outputOf = (index) => join(resultsDir, `async-resources-${index}.json`);
  const windows = await runProbedRateWindows(setup, {
    rounds,
    rate,
    seconds,
    outputOf,
    probe: (index) => ({
      flags: `--import ${join(root, 'bench/lib/async-resources-probe.mjs')}`,
      env: { GW_ASYNC_RESOURCES_OUT: outputOf(index), ...(withSites ? { GW_ASYNC_RESOURCES_SITES: '1', GW_SERVER_ENTRY: 'dist/src/main.js' } : {}) },
    }),
  });
  const results = windows.map((variantWindows) => {
    const result = { calls: 0, counts: {}, sites: {} };
    for (const { recorded, outcome } of variantWindows) {
      result.calls += outcome.result.completed + rate * WARMUP_S;
      for (const [type, count] of Object.entries(recorded.counts)) result.counts[type] = (result.counts[type] ?? 0) + count;
      for (const [site, count] of Object.entries(recorded.sites)) result.sites[site] = (result.sites[site] ?? 0) + count;
    }
    return result;
  });
  const summaries = results.map((result) => ({
    calls: result.calls,
    perCall: perCallCounts(result.counts, result.calls),
    sites: withSites ? perCallSites(result.sites, result.calls, root) : [],
  }));
  if (argv.includes('--json')) {
    console.log(JSON.stringify({ rate, seconds, rounds, variants: variants.map((variant, index) => ({ ...variant, ...summaries[index] })) }, null, 2));
    return;
  }
  console.log(`chat at ${rate} req/s, ${rounds} window(s) of ${seconds} s (+${WARMUP_S} s warm-up) per variant: async resources created per call`);
  for (const [index, variant] of variants.entries()) {
    const settingsText = describeSettings(variant);
    const summary = summaries[index];
    console.log(`${variant.name}${settingsText ? ` (${settingsText})` : ''}: ${summary.calls} calls`);
    for (const row of summary.perCall) console.log(`  ${row.type.padEnd(28)}${row.perCall.toFixed(2).padStart(8)}`);
    if (summary.sites.length) console.log(`  created by (every ${8}th sampled):`);
    for (const row of summary.sites) console.log(`  ${row.perCall.toFixed(2).padStart(8)}  ${row.type.padEnd(12)} ${row.site}`);
  }
}

main()
  .catch((error) => {
    console.error(`async-resources FAILED: ${error.stack ?? error.message}`);
    process.exitCode = 1;
  })
  .finally(() => stopStarted(started));
