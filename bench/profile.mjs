#!/usr/bin/env node
// Profiles the gateway's request path: gw under `node --cpu-prof --trace-gc`, pinned like the
// benchmark, loaded with wrk (closed loop, 32 conns) for BENCH_PROFILE_S seconds (default 20)
// after a warm-up; then the top functions by self time and the GC pauses go to
// profile-summary.json (read by report.mjs). Uses the data dir prepared by prepare.mjs.
//
//   node bench/profile.mjs --results DIR --peer PEERBENCH_DIR --root REPO
//
// BENCH_PROFILE_RATE=500 profiles at that fixed rate instead (peerbench's open-loop load
// generator, the regime of the added-latency targets), sampling every BENCH_PROFILE_INTERVAL_US
// (default 1000 closed loop, 50 at a fixed rate, where the gateway is busy a fraction of the time):
// each call then runs on a CPU gone cold while it idled, and the profile shows what that costs.
import { readdirSync, readFileSync, writeFileSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gatewayEnvironment, resultPaths } from './lib/gateway-setup.mjs';
import { measure } from './lib/measure.mjs';
import { portOpen, startProcess, stopProcess, waitForListening } from './lib/processes.mjs';
import { summarizeProfile } from './summarize-profile.mjs';
import { median } from './lib/report-figures.mjs';
import { MARKER } from './lib/scenario-plan.mjs';

const options = {};
for (let index = 2; index < process.argv.length; index += 2) options[process.argv[index].replace(/^--/, '')] = process.argv[index + 1];
const { results: resultsDir, peer: peerDir, root } = options;
if (!resultsDir || !peerDir || !root) {
  console.error('usage: profile.mjs --results DIR --peer PEERBENCH_DIR --root REPO');
  process.exit(2);
}
const environment = process.env;
const seconds = Number(environment.BENCH_PROFILE_S ?? 20);
const fixedRate = environment.BENCH_PROFILE_RATE ? Number(environment.BENCH_PROFILE_RATE) : undefined;
const sampleIntervalUs = Number(environment.BENCH_PROFILE_INTERVAL_US ?? (fixedRate ? 50 : 1000));
if ((fixedRate !== undefined && !(fixedRate >= 1 && fixedRate <= 20_000)) || !(sampleIntervalUs >= 10 && sampleIntervalUs <= 100_000)) {
  console.error('BENCH_PROFILE_RATE must be 1-20000 req/s and BENCH_PROFILE_INTERVAL_US 10-100000');
  process.exit(2);
}
const mockPort = Number(environment.MOCK_PORT ?? 18080);
const gwPort = Number(environment.BENCH_GW_PORT ?? 18991);
const pin = (environment.PIN ?? '1') === '1';
const gwCpus = pin ? (environment.GW_CPUS ?? '0') : undefined;
const loadCpus = pin ? (environment.LOAD_CPUS ?? '1') : undefined;
const state = JSON.parse(readFileSync(resultPaths(resultsDir).state, 'utf8'));
const profileDir = join(resultsDir, 'profile');
mkdirSync(profileDir, { recursive: true });
const started = [];

/**
 * Pause times from --trace-gc lines: "[pid:0x…] 123 ms: Scavenge 68.8 (86.7) -> 55.6 (87.0) MB, 5.42 / 0.23 ms".
 * Only the event loop's heap counts (the isolate with the most collections): a worker thread's
 * heap (the SQLite checkpoint thread) collects on its own thread and never pauses requests.
 */
function gcStats(log, loadSeconds) {
  const byIsolate = new Map();
  for (const match of log.matchAll(/^\[\d+:(0x[0-9a-f]+)\][^\n]*?(Scavenge|Mark-Compact|Mark-sweep)[^,\n]*MB, ([\d.]+) \/ [\d.]+ ms/gm)) {
    if (!byIsolate.has(match[1])) byIsolate.set(match[1], { scavenge: [], markCompact: [] });
    const pauses = byIsolate.get(match[1]);
    (match[2] === 'Scavenge' ? pauses.scavenge : pauses.markCompact).push(Number(match[3]));
  }
  const count = (entry) => entry.scavenge.length + entry.markCompact.length;
  const pauses = [...byIsolate.values()].sort((a, b) => count(b) - count(a))[0] ?? { scavenge: [], markCompact: [] };
  return {
    seconds: loadSeconds,
    scavenges: pauses.scavenge.length,
    scavengeMedianMs: median(pauses.scavenge),
    scavengeMaxMs: pauses.scavenge.length ? Math.max(...pauses.scavenge) : null,
    markCompacts: pauses.markCompact.length,
    markCompactMaxMs: pauses.markCompact.length ? Math.max(...pauses.markCompact) : null,
  };
}

async function main() {
  if (await portOpen(mockPort)) throw new Error(`port ${mockPort} (mock) is in use`);
  const mock = startProcess({ command: process.execPath, args: [join(peerDir, 'mock-upstream.mjs'), String(mockPort)], cpus: loadCpus, logFile: join(profileDir, 'mock.log') });
  started.push(mock);
  await waitForListening(mock, { port: mockPort, timeoutMs: 10_000 });
  const env = gatewayEnvironment({ ...state.sqlite, configFile: state.catalog, masterKey: state.masterKey, secret: state.secret, port: gwPort });
  const gateway = startProcess({
    command: join(root, 'bin/gw-server'),
    args: [],
    cwd: root,
    // The same code unbundled (dist/src/): the profile then names each function's file and line,
    // where the server bundle's are all on a handful of long lines of dist/server/main.js.
    env: { ...env, GW_SERVER_ENTRY: 'dist/src/main.js', GW_NODE_FLAGS: `--cpu-prof --cpu-prof-interval=${sampleIntervalUs} --cpu-prof-dir=${profileDir} --trace-gc` },
    cpus: gwCpus,
    logFile: join(profileDir, 'gw.log'),
  });
  started.push(gateway);
  await waitForListening(gateway, { port: gwPort });
  const target = {
    url: `http://127.0.0.1:${gwPort}/v1/chat/completions`,
    bodyFile: join(peerDir, 'bodies', 'chat.json'),
    headers: `Authorization: Bearer ${state.sqlite.apiKey}`,
    // The fixed-rate load generator counts an answer without it as bad (and leaves it out of its latencies).
    marker: MARKER,
  };
  const closedLoop = { ...target, kind: 'thr', conns: 32 };
  const spec = fixedRate ? { ...target, kind: 'rate', rate: fixedRate } : closedLoop;
  const settings = { peerDir, loadCpus, streamDurationS: 1, gatewayPid: gateway.pid };
  await measure(closedLoop, { ...settings, durationS: 5 });
  if (fixedRate) await measure(spec, { ...settings, durationS: 3 });
  const logBefore = gateway.output().length;
  const outcome = await measure(spec, { ...settings, durationS: seconds });
  const gcLog = gateway.output().slice(logBefore);
  // CPU time per request is the figure that survives a busy machine; latency does not.
  const answered = fixedRate ? outcome.result?.ok : outcome.result?.requests;
  const cpuPerRequestUs = answered ? Math.round((outcome.gwCpuS * 1e6) / answered) : null;
  await stopProcess(gateway);
  // One profile per thread (a SQLite writer thread writes its own): the main thread's is the first
  // one started, and the one with the most samples.
  const file = readdirSync(profileDir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((name) => ({ name, size: statSync(join(profileDir, name)).size }))
    .sort((a, b) => b.size - a.size)[0]?.name;
  if (!file) throw new Error('no .cpuprofile written');
  // Only the measured load counts (plus the second of shutdown), not start-up or warm-up.
  const summary = summarizeProfile(JSON.parse(readFileSync(join(profileDir, file), 'utf8')), 40, seconds + 1);
  const output = {
    load: fixedRate
      ? `${fixedRate} req/s open loop (loadgen.mjs), ${seconds} s after a 5 s closed-loop and a 3 s fixed-rate warm-up (client p50 ${outcome.result?.latency_ms?.p50 ?? '?'} ms, gateway cpu ${outcome.gwCpuPct}%, ${cpuPerRequestUs ?? '?'} µs of gateway CPU per request; sampled every ${sampleIntervalUs} µs)`
      : `wrk closed loop, 32 conns, ${seconds} s after a 5 s warm-up (${outcome.result?.rps ?? '?'} req/s, gateway cpu ${outcome.gwCpuPct}%, ${cpuPerRequestUs ?? '?'} µs of gateway CPU per request)`,
    cpuPerRequestUs,
    profile: join('profile', file),
    summary,
    gc: gcStats(gcLog, seconds),
  };
  writeFileSync(join(resultsDir, 'profile-summary.json'), `${JSON.stringify(output, null, 2)}\n`);
  console.error(`profile: ${output.load}; top: ${summary.functions.slice(0, 5).map((entry) => `${entry.name} ${entry.pct}%`).join('; ')}`);
}

main()
  .catch((error) => {
    console.error(`profile FAILED: ${error.stack ?? error.message}`);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const handle of started.reverse()) await stopProcess(handle, 10_000);
  });
