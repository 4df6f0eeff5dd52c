#!/usr/bin/env node
// Bytes the gateway allocates per request, by allocation site: the figure behind its young-
// generation collections (and, with --survivors, behind its full ones). Starts peerbench's mock and
// a prepared gateway (embedded defaults, pinned like the benchmark), loads it at a fixed rate (or
// with four concurrent streams), samples allocations over the load with V8's sampling heap profiler
// (bench/lib/allocation-sampler.mjs), and prints bytes per request. Needs `npm run build` first.
//
//   node bench/allocation-profile.mjs                      # chat at 500 req/s for 5 s
//   node bench/allocation-profile.mjs --kind stream        # 4 concurrent streams for 5 s
//   node bench/allocation-profile.mjs --kind embedding     # embeddings at 500 req/s
//   node bench/allocation-profile.mjs --survivors          # only what outlived the nursery
//   node bench/allocation-profile.mjs --mode postgres      # Postgres + Redis (BENCH_POSTGRES_URL,
//                                                          # BENCH_REDIS_URL; a fresh schema)
//   node bench/allocation-profile.mjs --hidden-classes     # hidden classes the engine made per call,
//                                                          # by kind and by the key a transition added
//                                                          # (V8's --log-maps; see bench/lib/map-log-summary.mjs)
//   options: --seconds N  --rate N  --top N  --json
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { measure } from './lib/measure.mjs';
import { portOpen, startProcess, waitForListening } from './lib/processes.mjs';
import { summarizeAllocations } from './lib/allocation-summary.mjs';
import { summarizeMapLog } from './lib/map-log-summary.mjs';
import { EMBEDDING_MARKER } from './lib/scenario-plan.mjs';
import { gatewayEnvironment as modeEnvironment } from './lib/gateway-setup.mjs';
import { startToolFixture, stopStarted, toolSettings } from './lib/tool-fixture.mjs';

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(`--${name}`);
const option = (name, fallback) => {
  const index = argv.indexOf(`--${name}`);
  return index >= 0 && argv[index + 1] !== undefined ? argv[index + 1] : fallback;
};
const kind = option('kind', 'chat');
const mode = option('mode', 'sqlite');
if (!['chat', 'stream', 'embedding'].includes(kind) || (mode !== 'sqlite' && mode !== 'postgres')) {
  console.error('usage: allocation-profile.mjs [--kind chat|stream|embedding] [--mode sqlite|postgres] [--seconds N] [--rate N] [--survivors | --hidden-classes] [--top N] [--json]');
  process.exit(2);
}
const seconds = Number(option('seconds', 5));
const rate = Number(option('rate', 500));
const top = Number(option('top', 20));
const hiddenClasses = flag('hidden-classes');
const CALL_NAMES = { chat: 'chat call', stream: 'streamed call', embedding: 'embeddings call' };
if (hiddenClasses && flag('survivors')) {
  console.error('allocation-profile.mjs: --survivors and --hidden-classes are two different runs; pass one');
  process.exit(2);
}
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { peerDir, mockPort, gwCpus, loadCpus } = toolSettings(root);
const gwPort = Number(process.env.BENCH_GW_PORT ?? 18993);
const resultsDir = mkdtempSync(join(tmpdir(), 'gw-allocation-'));
const started = [];

async function main() {
  for (const port of [mockPort, gwPort]) if (await portOpen(port)) throw new Error(`port ${port} is in use`);
  const { state, storageFor } = await startToolFixture({ root, peerDir, resultsDir, mockPort, loadCpus, started });
  const profileFile = join(resultsDir, 'allocation.heapprofile');
  const mapLog = join(resultsDir, 'maps.log');
  const storage = await storageFor(mode);
  const env = modeEnvironment({ ...storage, configFile: state.catalog, masterKey: state.masterKey, secret: state.secret, port: gwPort });
  const gateway = startProcess({
    command: join(root, 'bin/gw-server'),
    cwd: root,
    env: {
      ...env,
      GW_NODE_FLAGS: hiddenClasses
        ? `--log-maps --logfile=${mapLog} --no-logfile-per-isolate`
        : `--expose-gc --import ${join(root, 'bench/lib/allocation-sampler.mjs')}`,
      GW_ALLOCATION_PROFILE_OUT: profileFile,
      GW_ALLOCATION_SURVIVORS: flag('survivors') ? '1' : '0',
    },
    cpus: gwCpus,
    logFile: join(resultsDir, 'gw.log'),
  });
  started.push(gateway);
  await waitForListening(gateway, { port: gwPort });
  const url = `http://127.0.0.1:${gwPort}/v1/chat/completions`;
  const headers = `Authorization: Bearer ${storage.apiKey}`;
  const settings = { peerDir, loadCpus, durationS: seconds, streamDurationS: seconds, gatewayPid: gateway.pid };
  // Warm-up: compiled code and pools in place before anything is counted.
  await measure({ kind: 'thr', url, bodyFile: join(peerDir, 'bodies', 'chat.json'), headers, conns: 32 }, { ...settings, durationS: 3 });
  await sleep(1500);
  // With --log-maps only the part of the log written during the load is read (the warm-up made
  // most of the process's classes); V8 buffers its log, so the edges are off by a buffer at most.
  const mapLogStart = hiddenClasses ? statSync(mapLog).size : 0;
  if (!hiddenClasses) process.kill(gateway.pid, 'SIGUSR2');
  await sleep(300);
  const specs = {
    chat: { kind: 'rate', url, bodyFile: join(peerDir, 'bodies', 'chat.json'), headers, marker: 'peerbench-mock', rate },
    stream: { kind: 'stream', url, bodyFile: join(peerDir, 'bodies', 'chat-stream.json'), headers, marker: 'peerbench-mock', concurrency: 4, minEvents: 2 },
    embedding: { kind: 'rate', url: url.replace('/chat/completions', '/embeddings'), bodyFile: join(root, 'bench/bodies/embeddings.json'), headers, marker: EMBEDDING_MARKER, rate },
  };
  const spec = specs[kind];
  const outcome = await measure(spec, settings);
  await sleep(300);
  if (hiddenClasses) {
    reportHiddenClasses(readBetween(mapLog, mapLogStart, statSync(mapLog).size), requestsMeasured(outcome));
    return;
  }
  process.kill(gateway.pid, 'SIGUSR2');
  for (let waited = 0; waited < 10_000; waited += 200) {
    await sleep(200);
    try {
      readFileSync(profileFile);
      break;
    } catch {
      // not written yet
    }
  }
  const requests = requestsMeasured(outcome);
  const summary = summarizeAllocations(JSON.parse(readFileSync(profileFile, 'utf8')), requests, top);
  if (flag('json')) {
    console.log(JSON.stringify({ kind, survivorsOnly: flag('survivors'), ...summary }, null, 2));
    return;
  }
  const what = flag('survivors') ? 'outliving the nursery' : 'allocated';
  console.log(`${summary.bytesPerRequest} bytes ${what} per ${CALL_NAMES[kind]} (${summary.requests} calls)`);
  console.log('\nby allocating function:');
  for (const row of summary.bySite) console.log(`${String(row.bytesPerRequest).padStart(8)}  ${row.site}`);
  console.log('\nby nearest gateway frame:');
  for (const row of summary.byGatewayFrame) console.log(`${String(row.bytesPerRequest).padStart(8)}  ${row.site}`);
}

function requestsMeasured(outcome) {
  const measured = outcome.result?.completed ?? 0;
  if (!measured) throw new Error(`no requests were answered: ${JSON.stringify(outcome.result)}`);
  // The load generator's warm-up second is sampled too but not counted in `completed`; the load is
  // steady, so it adds one second's worth of calls.
  return Math.round((measured * (seconds + 1)) / seconds);
}

function readBetween(file, from, to) {
  const bytes = Buffer.alloc(Math.max(0, to - from));
  const descriptor = openSync(file, 'r');
  try {
    readSync(descriptor, bytes, 0, bytes.length, from);
  } finally {
    closeSync(descriptor);
  }
  const text = bytes.toString('latin1');
  // The first line may have been cut at the start offset.
  return text.slice(text.indexOf('\n') + 1);
}

function reportHiddenClasses(logText, requests) {
  const summary = summarizeMapLog(logText, requests, top);
  if (flag('json')) {
    console.log(JSON.stringify({ kind, ...summary }, null, 2));
    return;
  }
  console.log(`${summary.classesPerRequest} hidden classes made per ${CALL_NAMES[kind]} (${summary.requests} calls)`);
  console.log('\nby kind:');
  for (const row of summary.byKind) console.log(`${row.perRequest.toFixed(2).padStart(8)}  ${row.name}`);
  console.log('\ntransitions by the key they add:');
  for (const row of summary.transitionsByKey) console.log(`${row.perRequest.toFixed(2).padStart(8)}  ${row.name}`);
}

main()
  .catch((error) => {
    console.error(`allocation-profile FAILED: ${error.stack ?? error.message}`);
    process.exitCode = 1;
  })
  .finally(() => stopStarted(started));
