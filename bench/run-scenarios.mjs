#!/usr/bin/env node
// Extra scenarios against the direct call, in both storage modes: non-stream chat at 500 and
// 2000 req/s, max throughput, embeddings, a cache hit, a guardrail, streams; peak RSS.
// Pinned like peerbench: gateways on GW_CPUS, mock + load on LOAD_CPUS. Both modes' gateways are
// up at once (on BENCH_GW_PORT and BENCH_GW_PG_PORT) and their measurements alternate group by
// group, so the two modes are compared on the same minutes of a host whose speed drifts. Each
// measurement starts once the machine is quiet (QUIET_BUSY, QUIET_MAX_S), so one mode's leftovers
// (Postgres absorbing a burst of inserts) do not land in the next one's tail. Every process started
// here is stopped by its PID on exit. Reads state.json written by prepare.mjs. The two bare proxies
// measured beside gw in embedded mode listen on BENCH_FLOOR_PORT (18992) and BENCH_NET_FLOOR_PORT (18994).
//
//   node bench/run-scenarios.mjs --results DIR --peer PEERBENCH_DIR --root REPO
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { gatewayEnvironment, prepareGateway, resultPaths } from './lib/gateway-setup.mjs';
import { badCount, measure } from './lib/measure.mjs';
import { memoryKb, portOpen, runToEnd, startProcess, stopProcess, waitForListening, waitForQuiet } from './lib/processes.mjs';
import { ROUND_TRIP_GAP_MS } from './lib/report-figures.mjs';
import { probe, scenarioGroups, writeVariantBodies } from './lib/scenario-plan.mjs';
import { postgresRedisMode } from './lib/storage-modes.mjs';

const options = {};
for (let index = 2; index < process.argv.length; index += 2) options[process.argv[index].replace(/^--/, '')] = process.argv[index + 1];
const environment = process.env;
const number = (name, fallback) => (environment[name] ? Number(environment[name]) : fallback);
const settings = {
  repeats: number('BENCH_REPEATS', number('REPEATS', 3)),
  durationS: number('DUR', 8),
  streamDurationS: number('STREAM_DUR', 6),
  streamConcurrency: number('STREAM_CONC', 4),
  warmupS: number('WARMUP', 5),
  settleS: number('SETTLE', 1),
  // Before each measurement: wait (up to QUIET_MAX_S) until under QUIET_BUSY of all CPUs are busy.
  quietBusy: number('QUIET_BUSY', 0.1),
  quietMaxS: number('QUIET_MAX_S', 15),
  gwCpus: environment.GW_CPUS ?? '0',
  loadCpus: environment.LOAD_CPUS ?? '1',
  pin: (environment.PIN ?? '1') === '1',
  mockPort: number('MOCK_PORT', 18080),
  gwPort: number('BENCH_GW_PORT', 18991),
  postgresGwPort: number('BENCH_GW_PG_PORT', 18993),
  floorPort: number('BENCH_FLOOR_PORT', 18992),
  netFloorPort: number('BENCH_NET_FLOOR_PORT', 18994),
  mockChunks: number('MOCK_CHUNKS', 20),
  mockChunkDelayMs: number('MOCK_CHUNK_DELAY_MS', 10),
  modes: (environment.BENCH_MODES ?? 'sqlite postgres').split(/\s+/).filter(Boolean),
  soakS: number('BENCH_SOAK_S', 0),
};
const benchDir = dirname(fileURLToPath(import.meta.url));
const { results: resultsDir, peer: peerDir, root } = options;
if (!resultsDir || !peerDir || !root) {
  console.error('usage: run-scenarios.mjs --results DIR --peer PEERBENCH_DIR --root REPO');
  process.exit(2);
}
const paths = resultPaths(resultsDir);
const state = JSON.parse(readFileSync(paths.state, 'utf8'));
const started = [];
const log = (message) => process.stderr.write(`[scenarios ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
const cpus = (which) => (settings.pin ? which : undefined);
/** The servers behind Postgres + Redis mode, by process name (Postgres's backends share the name). */
const SHARED_SERVERS = ['redis-server', 'postgres'];

async function stopAll() {
  for (const handle of started.reverse()) await stopProcess(handle, 10_000);
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    log(`${signal}: stopping the processes started here`);
    stopAll().finally(() => process.exit(130));
  });
}

async function startGateway(mode, port) {
  if (await portOpen(port)) throw new Error(`port ${port} is in use (set BENCH_GW_PORT / BENCH_GW_PG_PORT)`);
  const env = gatewayEnvironment({ ...mode, configFile: state.catalog, masterKey: state.masterKey, secret: state.secret, port });
  const handle = startProcess({ command: join(root, 'bin/gw-server'), args: [], cwd: root, env, cpus: cpus(settings.gwCpus), logFile: join(resultsDir, `gw-${mode.name}.log`) });
  started.push(handle);
  await waitForListening(handle, { port });
  return handle;
}

/**
 * The two bare proxies on the gateway's CPU, measured beside gw at 500 req/s: bench/bare-node-proxy.mjs
 * (`node-floor`, node:http in front of undici: the floor a gateway built on them stands on) and
 * bench/bare-net-proxy.mjs (`net-floor`, the same on node:net alone, whole answers only: the lower
 * floor, under any Node gateway that parses the request).
 */
async function startFloors() {
  const floors = {};
  const plan = [
    { name: 'node-floor', port: settings.floorPort, variable: 'BENCH_FLOOR_PORT', script: 'bare-node-proxy.mjs', upstream: ['--upstream', `http://127.0.0.1:${settings.mockPort}`] },
    { name: 'net-floor', port: settings.netFloorPort, variable: 'BENCH_NET_FLOOR_PORT', script: 'bare-net-proxy.mjs', upstream: ['--upstream-port', String(settings.mockPort)] },
  ];
  for (const { name, port, variable, script, upstream } of plan) {
    if (await portOpen(port)) throw new Error(`port ${port} is in use (set ${variable})`);
    const args = [join(benchDir, script), '--port', String(port), ...upstream, '--seconds', '7200'];
    const handle = startProcess({ command: process.execPath, args, cwd: root, cpus: cpus(settings.gwCpus), logFile: join(resultsDir, `${name}.log`) });
    started.push(handle);
    await waitForListening(handle, { port });
    floors[name] = handle;
  }
  return floors;
}

async function warmUp(groups, gatewayPid) {
  const measureSettings = { peerDir, loadCpus: cpus(settings.loadCpus), durationS: settings.warmupS, streamDurationS: 2 };
  for (const group of groups) {
    if (group.id !== 'thr@32' && group.id !== 'stream') continue;
    for (const entry of group.entries) if (entry.name === 'gw') await measure(entry.spec, { ...measureSettings, gatewayPid });
  }
}

/** Starts a mode's gateway (and, in embedded mode, the bare Node proxy), probes its features and warms it up. */
async function openMode(mode, port) {
  const gateway = await startGateway(mode, port);
  const gatewayPid = gateway.pid;
  const floors = mode.name === 'sqlite' ? await startFloors() : {};
  const notes = [...(mode.notes ?? [])];
  const bodies = writeVariantBodies({ peerDir, resultsDir, guardrailId: mode.guardrailId, mode: mode.name });
  const probes = { cache: false, guardrail: false };
  // Probes: a feature scenario runs only when the feature answers as documented.
  const chatProbe = await probe(port, mode.apiKey, join(peerDir, 'bodies', 'chat.json'));
  if (chatProbe.status !== 200 || !chatProbe.marker) throw new Error(`${mode.name}: the gateway does not return the mock's answer: HTTP ${chatProbe.status} ${chatProbe.text}`);
  await probe(port, mode.apiKey, bodies.cacheBody);
  const cacheProbe = await probe(port, mode.apiKey, bodies.cacheBody);
  probes.cache = cacheProbe.status === 200 && cacheProbe.headers['x-gw-cache'] === 'hit';
  if (!probes.cache) notes.push(`cache-hit scenario skipped: a repeated request with gw_cache=true answered HTTP ${cacheProbe.status}, x-gw-cache=${cacheProbe.headers['x-gw-cache'] ?? '(absent)'}`);
  if (bodies.guardrailBody) {
    const guardrailProbe = await probe(port, mode.apiKey, bodies.guardrailBody);
    probes.guardrail = guardrailProbe.status === 200 && (guardrailProbe.headers['x-gw-guardrails-applied'] ?? '').includes('bench-pii');
    if (!probes.guardrail) notes.push(`guardrail scenario skipped: probe answered HTTP ${guardrailProbe.status}, x-gw-guardrails-applied=${guardrailProbe.headers['x-gw-guardrails-applied'] ?? '(absent)'}`);
  }
  const groups = scenarioGroups({
    mode: mode.name, peerDir, benchDir, mockPort: settings.mockPort, gwPort: port, apiKey: mode.apiKey, bodies, probes,
    streamConcurrency: settings.streamConcurrency, minEvents: settings.mockChunks + 2, floorPort: floors['node-floor'] ? settings.floorPort : undefined,
    netFloorPort: floors['net-floor'] ? settings.netFloorPort : undefined,
  });
  log(`${mode.name}: gateway pid ${gatewayPid} on port ${port} ready; probes ${JSON.stringify(probes)}; warming up`);
  await warmUp(groups, gatewayPid);
  const pidOf = (name) => (name === 'direct' ? undefined : name in floors ? floors[name].pid : gatewayPid);
  return { mode, gateway, floors, pidOf, notes, probes, groups, rssIdleKb: memoryKb(gatewayPid, 'VmRSS'), records: [], redisRoundTrips: [] };
}

/**
 * Postgres + Redis mode, once a round: one Redis round trip from the gateway's CPU
 * (bench/redis-round-trip.mjs) at each spacing the report prints beside a scenario
 * (ROUND_TRIP_GAP_MS). A call that checks shared state before its upstream request waits at least
 * this long, and the further apart the calls, the longer (both processes wake from idle).
 * At most 2,000 PINGs and about 10 s per spacing.
 */
const ROUND_TRIP_SPACINGS = [...new Set(Object.values(ROUND_TRIP_GAP_MS))].map((gapMs) => ({ gapMs, count: Math.min(2000, Math.round(10_000 / gapMs)) }));

async function measureRedisRoundTrip(session, round) {
  for (const { gapMs, count } of ROUND_TRIP_SPACINGS) {
    await waitForQuiet({ busyBelow: settings.quietBusy, maxMs: settings.quietMaxS * 1000 });
    const args = [join(benchDir, 'redis-round-trip.mjs'), '--url', session.mode.redisUrl, '--count', String(count), '--gap-ms', String(gapMs), '--json'];
    const run = await runToEnd({ command: process.execPath, args, cpus: cpus(settings.gwCpus), timeoutMs: 60_000 });
    let result;
    try {
      result = JSON.parse(run.stdout.trim().split('\n').pop());
    } catch {
      log(`postgres r${round} redis round trip (${gapMs} ms apart) failed (exit ${run.code}): ${run.output.slice(-300)}`);
      continue;
    }
    session.redisRoundTrips.push({ round, ...result });
    log(`postgres r${round} redis round trip, ${gapMs} ms apart: p50 ${result.rtt_ms.p50} p99 ${result.rtt_ms.p99} ms`);
  }
}

/** One group of one mode in one round: every entry once, the order rotated by round. */
async function measureGroup(session, group, round) {
  const measureSettings = { peerDir, loadCpus: cpus(settings.loadCpus), durationS: settings.durationS, streamDurationS: settings.streamDurationS };
  const name = session.mode.name;
  const count = group.entries.length;
  for (let step = 0; step < count; step++) {
    const entry = group.entries[(step + round - 1) % count];
    const quiet = await waitForQuiet({ busyBelow: settings.quietBusy, maxMs: settings.quietMaxS * 1000 });
    // In Postgres + Redis mode a call also costs the shared servers' CPU, measured beside the gateway's.
    const services = name === 'postgres' && entry.name !== 'direct' ? SHARED_SERVERS : undefined;
    const outcome = await measure(entry.spec, { ...measureSettings, gatewayPid: session.pidOf(entry.name), services });
    const bad = badCount(entry.spec.kind, outcome.result);
    session.records.push({ mode: name, round, group: group.id, name: entry.name, kind: entry.spec.kind, bad, at: new Date().toISOString(), quiet, ...outcome });
    const waited = quiet.quiet ? (quiet.waitedMs > 1000 ? ` (waited ${(quiet.waitedMs / 1000).toFixed(1)} s for a quiet machine)` : '') : ` (machine still ${Math.round(quiet.busy * 100)}% busy after ${settings.quietMaxS} s)`;
    log(`${name} r${round} ${group.id.padEnd(14)} ${entry.name.padEnd(13)} ${summarize(entry.spec.kind, outcome.result)} cpu ${outcome.gwCpuPct ?? '-'}% bad ${bad}${waited}`);
    await sleep(settings.settleS * 1000);
  }
}

/**
 * Every round walks the groups in order; within a group each open mode takes its turn, and the
 * mode that goes first alternates by round, so neither mode always measures on a warmer or a
 * cooler minute than the other.
 */
async function measureInterleaved(sessions) {
  const groupIds = [...new Set(sessions.flatMap((session) => session.groups.map((group) => group.id)))];
  for (let round = 1; round <= settings.repeats; round++) {
    const order = round % 2 === 1 ? sessions : [...sessions].reverse();
    for (const session of sessions) if (session.mode.name === 'postgres') await measureRedisRoundTrip(session, round);
    for (const id of groupIds) {
      for (const session of order) {
        const group = session.groups.find((each) => each.id === id);
        if (group) await measureGroup(session, group, round);
      }
    }
  }
}

async function closeMode(session, soak) {
  const gatewayPid = session.gateway.pid;
  const rssPeakKb = memoryKb(gatewayPid, 'VmHWM');
  const rssEndKb = memoryKb(gatewayPid, 'VmRSS');
  const alive = session.gateway.child.exitCode === null;
  await stopProcess(session.gateway);
  for (const floor of Object.values(session.floors)) await stopProcess(floor);
  const { mode, probes, notes, rssIdleKb, records, redisRoundTrips } = session;
  return { label: mode.label, probes, notes, rssIdleKb, rssPeakKb, rssEndKb, aliveAtEnd: alive, soak, records, redisRoundTrips };
}

/** Fixed 500 req/s for BENCH_SOAK_S seconds, RSS sampled every 10 s: memory must stay flat. */
async function runSoak(groups, gatewayPid) {
  const spec = groups.find((group) => group.id === 'chat@500').entries.find((entry) => entry.name === 'gw').spec;
  const samples = [];
  const sampler = setInterval(() => samples.push({ t_s: samples.length * 10, rss_kb: memoryKb(gatewayPid, 'VmRSS') }), 10_000);
  log(`soak: 500 req/s for ${settings.soakS} s`);
  const outcome = await measure(spec, { peerDir, loadCpus: cpus(settings.loadCpus), durationS: settings.soakS, streamDurationS: 1, gatewayPid });
  clearInterval(sampler);
  return { durationS: settings.soakS, samples, bad: badCount('rate', outcome.result), result: outcome.result };
}

function summarize(kind, result) {
  if (!result) return 'NO RESULT';
  if (kind === 'thr') return `${result.rps} req/s`;
  if (kind === 'rate') return `p50 ${result.latency_ms.p50} p99 ${result.latency_ms.p99} ms done ${result.achieved_rate}/s`;
  return `first event p50 ${result.first_event_ms.p50} p99 ${result.first_event_ms.p99} ms`;
}

async function main() {
  if (await portOpen(settings.mockPort)) throw new Error(`port ${settings.mockPort} (mock) is in use`);
  const mock = startProcess({
    command: process.execPath,
    args: [join(peerDir, 'mock-upstream.mjs'), String(settings.mockPort)],
    cpus: cpus(settings.loadCpus),
    env: { ...environment, MOCK_CHUNKS: String(settings.mockChunks), MOCK_CHUNK_DELAY_MS: String(settings.mockChunkDelayMs), MOCK_DELAY_MS: environment.MOCK_DELAY_MS ?? '0' },
    logFile: join(resultsDir, 'scenario-mock.log'),
  });
  started.push(mock);
  await waitForListening(mock, { port: settings.mockPort, timeoutMs: 10_000 });
  const modes = {};
  const sessions = [];
  const disposers = [];
  const startedAt = new Date().toISOString();
  try {
    for (const name of settings.modes) {
      if (name === 'sqlite') {
        sessions.push(await openMode(state.sqlite, settings.gwPort));
      } else if (name === 'postgres') {
        let mode;
        try {
          mode = await postgresRedisMode(resultsDir, { postgresUrl: environment.BENCH_POSTGRES_URL, redisUrl: environment.BENCH_REDIS_URL });
        } catch (error) {
          log(`postgres + redis mode skipped: ${error.message}`);
          modes.postgres = { label: 'Postgres + Redis', skipped: `Postgres or Redis not reachable: ${error.message}`, records: [] };
          continue;
        }
        disposers.push(() => mode.dispose().catch((error) => log(`dropping schema ${mode.schema} failed: ${error.message}`)));
        const env = gatewayEnvironment({ ...mode, configFile: state.catalog, masterKey: state.masterKey, secret: state.secret });
        const prepared = await prepareGateway({ root, environment: env, logFile: join(resultsDir, 'prepare-postgres.log') });
        sessions.push(await openMode({ ...mode, ...prepared }, settings.postgresGwPort));
      }
    }
    await measureInterleaved(sessions);
    for (const session of sessions) {
      const name = session.mode.name;
      const soak = settings.soakS > 0 && name === 'sqlite' ? await runSoak(session.groups, session.gateway.pid) : null;
      modes[name] = await closeMode(session, soak);
    }
  } finally {
    // A failed run leaves gateways up: stop them before their schema is dropped.
    for (const session of sessions) await stopProcess(session.gateway);
    for (const dispose of disposers) await dispose();
  }
  const output = { started_at: startedAt, ended_at: new Date().toISOString(), settings, modes };
  writeFileSync(paths.scenariosJson, `${JSON.stringify(output, null, 2)}\n`);
  log(`wrote ${paths.scenariosJson}`);
}

main()
  .catch((error) => {
    log(`FAILED: ${error.stack ?? error.message}`);
    process.exitCode = 1;
  })
  .finally(stopAll);
