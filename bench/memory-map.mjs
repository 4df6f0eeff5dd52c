#!/usr/bin/env node
// Where an embedded gateway's resident memory goes under the benchmark's load, for one build under
// several runtime settings. Starts peerbench's mock and a prepared embedded gateway (pinned like the
// benchmark), then per round and variant: a fresh gateway, 8 s closed-loop at 32 and at 128
// connections (the benchmark's max-throughput runs, where its peak memory is reached), then 8 s at
// a fixed rate. Prints the peak (VmHWM, what the benchmark reports), the resident memory after the
// load, and the resident memory by mapping: the node binary's pages, anonymous memory (the V8 heaps
// of the main thread and the SQLite checkpoint thread, thread stacks, large malloc blocks), the
// malloc heap, shared libraries. A variant is a name and settings: Node flags (appended through
// GW_NODE_FLAGS; the later flag wins) and NAME=VALUE environment variables, in any order; the
// variant order alternates by round. Needs `npm run build`.
//
//   node bench/memory-map.mjs                                                   # the default settings only
//   node bench/memory-map.mjs --variant hgp40='--heap-growing-percent=40'       # default vs. a Node flag
//   node bench/memory-map.mjs --variant mmap='MALLOC_MMAP_THRESHOLD_=65536'     # default vs. a malloc setting
//   options: --rounds N (2)  --seconds N (8)  --rate N (500)  --json
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { badCount, measure } from './lib/measure.mjs';
import { startProcess, stopProcess, waitForListening } from './lib/processes.mjs';
import { gatewayEnvironment } from './lib/gateway-setup.mjs';
import { prepareVariantRun, stopStarted, variantToolSetup } from './lib/tool-fixture.mjs';
import { describeSettings } from './lib/tool-options.mjs';

const setup = variantToolSetup(import.meta.url, { rounds: 2, seconds: 8, rate: 500 });
const { rounds, seconds, rate } = setup.numbers;
const { argv, variants, root, gwCpus, firstPort, resultsDir, started } = setup;

const megabytes = (kilobytes) => Number((kilobytes / 1024).toFixed(1));

/** VmHWM and VmRSS of a process, in MB. */
function residentFigures(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => megabytes(Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0));
  return { peakMb: field('VmHWM'), residentMb: field('VmRSS') };
}

/** Resident MB per kind of mapping (/proc/<pid>/smaps). */
function residentByMapping(pid) {
  const groups = { 'node binary': 0, anonymous: 0, 'malloc heap': 0, 'shared libraries': 0, 'other files': 0 };
  let group = 'anonymous';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) {
      const path = mapping[1];
      if (path === '' || path.startsWith('[anon') || path === '[stack]') group = 'anonymous';
      else if (path === '[heap]') group = 'malloc heap';
      else if (path === process.execPath || basename(path) === 'node') group = 'node binary';
      else if (/\.so(\.|$)|\.node$/.test(path)) group = 'shared libraries';
      else group = 'other files';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) groups[group] += Number(rss[1]);
  }
  return Object.fromEntries(Object.entries(groups).map(([name, kilobytes]) => [name, megabytes(kilobytes)]));
}

async function main() {
  const { state, storage, bodyFile, headers, settings } = await prepareVariantRun(setup, seconds);
  const results = variants.map(() => []);
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? variants : [...variants].reverse();
    for (const variant of order) {
      const index = variants.indexOf(variant);
      const port = firstPort + index;
      const env = gatewayEnvironment({ ...storage, configFile: state.catalog, masterKey: state.masterKey, secret: state.secret, port });
      const gateway = startProcess({
        command: join(root, 'bin/gw-server'),
        cwd: root,
        env: { ...env, ...variant.env, GW_NODE_FLAGS: variant.flags },
        cpus: gwCpus,
        logFile: join(resultsDir, `gw-${round}-${index}.log`),
      });
      try {
        await waitForListening(gateway, { port });
        const url = `http://127.0.0.1:${port}/v1/chat/completions`;
        console.error(`round ${round + 1}: ${variant.name}: ${seconds} s at 32 and at 128 connections, then ${rate} req/s`);
        const throughput = [];
        for (const conns of [32, 128]) {
          const outcome = await measure({ kind: 'thr', url, bodyFile, headers, conns }, settings);
          if (badCount('thr', outcome.result) > 0) throw new Error(`${variant.name}: the ${conns}-connection run failed: ${JSON.stringify(outcome.result)}`);
          assertRunning(gateway);
          throughput.push(Math.round(outcome.result.rps));
        }
        const fixed = await measure({ kind: 'rate', url, bodyFile, headers, marker: 'peerbench-mock', rate }, settings);
        if (badCount('rate', fixed.result) > 0) throw new Error(`${variant.name}: the ${rate} req/s window failed: ${JSON.stringify(fixed.result)}`);
        results[index].push({ ...residentFigures(gateway.pid), byMapping: residentByMapping(gateway.pid), throughput, latency: fixed.result.latency_ms });
      } finally {
        await stopProcess(gateway, 10_000);
      }
    }
  }
  if (argv.includes('--json')) {
    console.log(JSON.stringify({ seconds, rate, variants: variants.map((variant, index) => ({ ...variant, rounds: results[index] })) }, null, 2));
    return;
  }
  console.log(`peak and resident MB after ${seconds} s at 32 and at 128 connections and ${seconds} s at ${rate} req/s, a fresh gateway each round`);
  for (const [index, variant] of variants.entries()) {
    const settingsText = describeSettings(variant);
    console.log(`${variant.name}${settingsText ? ` (${settingsText})` : ''}`);
    for (const [round, figures] of results[index].entries()) {
      const mappings = Object.entries(figures.byMapping).map(([name, mb]) => `${name} ${mb}`).join(', ');
      console.log(
        `  round ${round + 1}  peak ${figures.peakMb}  resident ${figures.residentMb} (${mappings})  req/s ${figures.throughput.join(' / ')}  ` +
          `${rate} req/s p50 ${figures.latency.p50.toFixed(2)} p99 ${figures.latency.p99.toFixed(2)} ms`,
      );
    }
  }
}

/** A gateway that died under load has no /proc entry to read: say so instead. */
function assertRunning(gateway) {
  const { exitCode, signalCode } = gateway.child;
  if (exitCode !== null || signalCode !== null) throw new Error(`the gateway exited (${exitCode ?? signalCode}); see its log in ${resultsDir}`);
}

main()
  .catch((error) => {
    console.error(`memory-map FAILED: ${error.stack ?? error.message}`);
    process.exitCode = 1;
  })
  .finally(() => stopStarted(started));
