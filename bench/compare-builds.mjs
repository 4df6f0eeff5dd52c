#!/usr/bin/env node
// Two builds of gw side by side in Postgres + Redis mode, on one schema and one Redis, with the
// candidate's embedded defaults beside them: what a change to the Postgres + Redis path bought,
// measured in the same minutes of a host whose speed drifts. Each round measures the direct call,
// then every gateway in turn (the order reversed every other round), at a fixed 500 req/s (added
// p50 / p99 over the direct call) and as 4 streams at a time (first event's added p50). Pinned as
// the benchmark is: gateways on GW_CPUS (default 0), mock and load on LOAD_CPUS (default 1).
//
//   node bench/compare-builds.mjs --baseline DIR [--candidate DIR] [--rounds 4] [--seconds 8]
//     [--baseline-env K=V,K2=V2] [--storage postgres|embedded] [--throughput] [--json]
//
// `--storage embedded` runs both builds on the embedded defaults instead, each on its own copy of
// one prepared SQLite data dir (no Postgres + Redis gateway, nothing beside them).
//
// DIR is a checkout with dist/ built and node_modules in place, e.g. the commit before a change:
//   git worktree add /tmp/gw-base HEAD~1 && ln -s "$PWD/node_modules" /tmp/gw-base/node_modules \
//     && (cd /tmp/gw-base && npx tsc -p tsconfig.build.json)
// `--throughput` adds a closed-loop round per gateway (wrk, 32 connections): its requests a second and
// the gateway's CPU time per request, a steadier figure than latency on a host whose speed drifts
// (what a change to the per-call work bought shows there first).
//
// The candidate defaults to this checkout (run `npm run build` first). Both builds must share the
// database schema; the schema is made by the candidate. `--baseline-env` adds environment variables
// to the baseline gateway only, so one build can be compared with itself under another setting:
//   node bench/compare-builds.mjs --baseline . --baseline-env GW_UPSTREAM_CLIENT=undici
import { cpSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measure } from './lib/measure.mjs';
import { portOpen, startProcess, waitForListening, waitForQuiet } from './lib/processes.mjs';
import { gatewayEnvironment } from './lib/gateway-setup.mjs';
import { startToolFixture, stopStarted, toolSettings } from './lib/tool-fixture.mjs';
import { sqliteMode } from './lib/storage-modes.mjs';

const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const index = argv.indexOf(`--${name}`);
  return index >= 0 && argv[index + 1] !== undefined ? argv[index + 1] : fallback;
};
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const baseline = option('baseline');
const candidate = resolve(option('candidate', root));
const rounds = Number(option('rounds', 4));
const seconds = Number(option('seconds', 8));
const baselineEnv = Object.fromEntries(
  String(option('baseline-env', ''))
    .split(',')
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);
const storageMode = option('storage', 'postgres');
if (!baseline || !(rounds >= 1 && rounds <= 20) || !(seconds >= 2 && seconds <= 60) || !['postgres', 'embedded'].includes(storageMode)) {
  console.error('usage: compare-builds.mjs --baseline DIR [--candidate DIR] [--rounds 1-20] [--seconds 2-60] [--baseline-env K=V,...] [--storage postgres|embedded] [--throughput] [--json]');
  process.exit(2);
}
const { peerDir, mockPort, gwCpus, loadCpus } = toolSettings(root);
const resultsDir = mkdtempSync(join(tmpdir(), 'gw-compare-builds-'));
const started = [];
const log = (message) => process.stderr.write(`[compare ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/** The figure a measurement gives for its kind: latency at a fixed rate, first event for streams. */
const figureOf = (kind, result) => (kind === 'rate' ? result?.latency_ms : result?.first_event_ms);
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];
const round3 = (value) => Number(value.toFixed(3));
/** Whether a command is found on the PATH. */
const onPath = (command) => (process.env.PATH ?? '').split(':').some((dir) => dir !== '' && existsSync(join(dir, command)));

async function main() {
  const basePort = Number(process.env.BENCH_GW_BASE_PORT ?? 18995);
  const variants =
    storageMode === 'embedded'
      ? [
          { name: 'baseline (embedded)', root: resolve(baseline), mode: 'sqlite-copy', port: basePort, extraEnv: baselineEnv },
          { name: 'candidate (embedded)', root: candidate, mode: 'sqlite', port: Number(process.env.BENCH_GW_PORT ?? 18991) },
        ]
      : [
          { name: 'baseline (Postgres + Redis)', root: resolve(baseline), mode: 'postgres', port: basePort, extraEnv: baselineEnv },
          { name: 'candidate (Postgres + Redis)', root: candidate, mode: 'postgres', port: Number(process.env.BENCH_GW_PG_PORT ?? 18993) },
          { name: 'candidate (embedded)', root: candidate, mode: 'sqlite', port: Number(process.env.BENCH_GW_PORT ?? 18991) },
        ];
  if (argv.includes('--throughput') && !onPath('wrk')) {
    throw new Error('--throughput measures with wrk, which is not on the PATH: apt-get install -y wrk (../shared/peerbench/run.sh installs it when it runs)');
  }
  for (const port of [mockPort, ...variants.map((variant) => variant.port)]) if (await portOpen(port)) throw new Error(`port ${port} is in use`);
  const { state, storageFor } = await startToolFixture({ root: candidate, peerDir, resultsDir, mockPort, loadCpus, started });
  const storage = { sqlite: await storageFor('sqlite') };
  if (storageMode === 'embedded') {
    // Two gateways never share one SQLite file: the baseline gets a copy, made before either starts.
    const copy = sqliteMode(join(resultsDir, 'baseline'));
    cpSync(storage.sqlite.dataDir, copy.dataDir, { recursive: true });
    storage['sqlite-copy'] = { ...storage.sqlite, dataDir: copy.dataDir, databaseUrl: copy.databaseUrl };
  } else {
    storage.postgres = await storageFor('postgres');
  }
  for (const variant of variants) {
    const chosen = storage[variant.mode];
    const env = { ...gatewayEnvironment({ ...chosen, configFile: state.catalog, masterKey: state.masterKey, secret: state.secret, port: variant.port }), ...variant.extraEnv };
    variant.gateway = startProcess({ command: join(variant.root, 'bin/gw-server'), cwd: variant.root, env, cpus: gwCpus, logFile: join(resultsDir, `gw-${variant.port}.log`) });
    started.push(variant.gateway);
    await waitForListening(variant.gateway, { port: variant.port });
    variant.target = { url: `http://127.0.0.1:${variant.port}`, headers: `Authorization: Bearer ${chosen.apiKey}` };
  }
  const direct = { url: `http://127.0.0.1:${mockPort}`, headers: 'Authorization: Bearer peerbench' };
  const specs = {
    rate: { kind: 'rate', path: '/v1/chat/completions', bodyFile: join(peerDir, 'bodies', 'chat.json'), marker: 'peerbench-mock', rate: 500 },
    stream: { kind: 'stream', path: '/v1/chat/completions', bodyFile: join(peerDir, 'bodies', 'chat-stream.json'), marker: 'peerbench-mock', concurrency: 4, minEvents: 22 },
  };
  if (argv.includes('--throughput')) specs.thr = { kind: 'thr', path: '/v1/chat/completions', bodyFile: join(peerDir, 'bodies', 'chat.json'), conns: 32 };
  const at = (spec, target) => ({ ...spec, url: `${target.url}${spec.path}`, headers: target.headers });
  const settings = { peerDir, loadCpus, durationS: seconds, streamDurationS: Math.min(seconds, 6) };
  log(`results in ${resultsDir}; warming up${Object.keys(baselineEnv).length ? `; baseline with ${JSON.stringify(baselineEnv)}` : ''}`);
  for (const variant of variants) await measure(at(specs.rate, variant.target), { ...settings, durationS: 4 });

  const rows = [];
  for (let index = 0; index < rounds; index++) {
    const order = index % 2 === 0 ? variants : [...variants].reverse();
    for (const [kind, spec] of Object.entries(specs)) {
      await waitForQuiet();
      if (kind === 'thr') {
        for (const variant of order) rows.push(await throughputRow(index + 1, variant, at(spec, variant.target), settings));
        continue;
      }
      const floor = figureOf(kind, (await measure(at(spec, direct), settings)).result);
      if (!floor) throw new Error(`the direct ${kind} measurement gave no figures`);
      for (const variant of order) {
        await waitForQuiet();
        const outcome = await measure(at(spec, variant.target), { ...settings, gatewayPid: variant.gateway.pid });
        const figure = figureOf(kind, outcome.result);
        if (!figure) throw new Error(`${variant.name}: the ${kind} measurement gave no figures (exit ${outcome.rc})`);
        const row = { round: index + 1, kind, variant: variant.name, addedP50Ms: round3(figure.p50 - floor.p50), addedP99Ms: round3(figure.p99 - floor.p99), invalid: outcome.result.invalid ?? 0, cpuPct: outcome.gwCpuPct };
        rows.push(row);
        log(`round ${row.round} ${kind} ${variant.name}: added p50 ${row.addedP50Ms} ms, p99 ${row.addedP99Ms} ms, ${row.invalid} bad, CPU ${row.cpuPct}%`);
      }
    }
  }
  const summary = Object.keys(specs).filter((kind) => kind !== 'thr').map((kind) => {
    const of = (name) => rows.filter((row) => row.kind === kind && row.variant === name);
    const [base, cand] = [of(variants[0].name), of(variants[1].name)];
    const differences = cand.map((row, position) => round3(row.addedP50Ms - base[position].addedP50Ms));
    return {
      kind,
      medians: Object.fromEntries(variants.map((variant) => [variant.name, round3(median(of(variant.name).map((row) => row.addedP50Ms)))])),
      candidateMinusBaselineMs: differences,
      candidateBetterIn: `${differences.filter((difference) => difference < 0).length} of ${differences.length}`,
    };
  });
  const throughput = specs.thr ? summarizeThroughput(rows, variants) : undefined;
  if (argv.includes('--json')) {
    console.log(JSON.stringify({ rounds, seconds, rows, summary, throughput }, null, 2));
    return;
  }
  for (const entry of summary) {
    console.log(`${entry.kind === 'rate' ? 'chat at 500 req/s, added p50' : 'streams, first event added p50'} (median of ${rounds} rounds, ms):`);
    for (const [name, value] of Object.entries(entry.medians)) console.log(`  ${name.padEnd(30)} ${value}`);
    console.log(`  candidate − baseline per round: ${entry.candidateMinusBaselineMs.join(' ')} (candidate better in ${entry.candidateBetterIn})`);
  }
  if (throughput) {
    console.log(`max throughput at 32 connections (median of ${rounds} rounds):`);
    for (const [name, value] of Object.entries(throughput.medians)) console.log(`  ${name.padEnd(30)} ${value.rps} req/s, ${value.cpuUsPerRequest} µs of gateway CPU a request`);
    console.log(`  candidate − baseline CPU per request, per round (µs): ${throughput.candidateMinusBaselineUs.join(' ')} (candidate better in ${throughput.candidateBetterIn})`);
  }
}

/** One closed-loop window against one gateway: its requests a second and its CPU time per request. */
async function throughputRow(round, variant, spec, settings) {
  await waitForQuiet();
  const outcome = await measure(spec, { ...settings, gatewayPid: variant.gateway.pid });
  const result = outcome.result;
  if (!result?.requests) throw new Error(`${variant.name}: the throughput measurement gave no figures (exit ${outcome.rc})`);
  const failed = Object.values(result.errors ?? {}).reduce((sum, count) => sum + count, 0);
  const row = { round, kind: 'thr', variant: variant.name, rps: Math.round(result.rps), cpuUsPerRequest: Number(((outcome.gwCpuS / result.requests) * 1e6).toFixed(1)), failed };
  log(`round ${round} throughput ${variant.name}: ${row.rps} req/s, ${row.cpuUsPerRequest} µs CPU a request, ${failed} failed`);
  return row;
}

function summarizeThroughput(rows, variants) {
  const of = (name) => rows.filter((row) => row.kind === 'thr' && row.variant === name);
  const [base, cand] = [of(variants[0].name), of(variants[1].name)];
  const differences = cand.map((row, position) => Number((row.cpuUsPerRequest - base[position].cpuUsPerRequest).toFixed(1)));
  return {
    medians: Object.fromEntries(
      variants.map((variant) => [variant.name, { rps: median(of(variant.name).map((row) => row.rps)), cpuUsPerRequest: median(of(variant.name).map((row) => row.cpuUsPerRequest)) }]),
    ),
    candidateMinusBaselineUs: differences,
    candidateBetterIn: `${differences.filter((difference) => difference < 0).length} of ${differences.length}`,
  };
}

main()
  .catch((error) => {
    console.error(error.stack ?? error);
    process.exitCode = 1;
  })
  .finally(() => stopStarted(started));
