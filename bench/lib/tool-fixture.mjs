// What the single-purpose bench tools (allocation-profile.mjs, call-timeline.mjs, after-burst.mjs,
// loop-blockers.mjs, memory-map.mjs) share: their command-line setup, peerbench's mock on the load
// CPUs with the benchmark's stream shape, a prepared embedded gateway (bench/prepare.mjs), on
// request a prepared Postgres + Redis one, a gateway per variant, what a preloaded probe recorded,
// and stopping it all again.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { badCount, measure } from './measure.mjs';
import { portOpen, runToEnd, startProcess, stopProcess, waitForListening } from './processes.mjs';
import { numberOptions, optionReader, readVariants } from './tool-options.mjs';
import { gatewayEnvironment, prepareGateway } from './gateway-setup.mjs';
import { postgresRedisMode } from './storage-modes.mjs';

/**
 * Where the tools find peerbench and the mock, and which CPUs they pin to, from the environment as
 * the benchmark reads it: PEERBENCH_DIR, MOCK_PORT, PIN (1 = pin), GW_CPUS (0), LOAD_CPUS (1).
 */
export function toolSettings(root) {
  const pin = (process.env.PIN ?? '1') === '1';
  return {
    peerDir: resolve(process.env.PEERBENCH_DIR ?? join(root, '..', 'shared', 'peerbench')),
    mockPort: Number(process.env.MOCK_PORT ?? 18080),
    gwCpus: pin ? (process.env.GW_CPUS ?? '0') : undefined,
    loadCpus: pin ? (process.env.LOAD_CPUS ?? '1') : undefined,
  };
}

/**
 * Starts the mock and prepares the embedded gateway; returns the prepared state (state.json) and
 * `storageFor(mode)`, which gives the storage settings and key of 'sqlite' or of a fresh
 * 'postgres' schema (BENCH_POSTGRES_URL, BENCH_REDIS_URL). Everything started goes on `started`.
 */
export async function startToolFixture({ root, peerDir, resultsDir, mockPort, loadCpus, started }) {
  const mock = startProcess({
    command: process.execPath,
    args: [join(peerDir, 'mock-upstream.mjs'), String(mockPort)],
    cpus: loadCpus,
    // The benchmark's stream shape: 20 chunks 10 ms apart.
    env: { ...process.env, MOCK_CHUNKS: '20', MOCK_CHUNK_DELAY_MS: '10' },
    logFile: join(resultsDir, 'mock.log'),
  });
  started.push(mock);
  await waitForListening(mock, { port: mockPort, timeoutMs: 10_000 });
  const prepared = await runToEnd({
    command: process.execPath,
    args: [join(root, 'bench/prepare.mjs'), '--results', resultsDir, '--upstream', `http://127.0.0.1:${mockPort}/v1`, '--root', root],
    cwd: root,
  });
  if (prepared.code !== 0) throw new Error(`prepare.mjs failed: ${prepared.output.slice(-1500)}`);
  const state = JSON.parse(readFileSync(join(resultsDir, 'state.json'), 'utf8'));
  const storageFor = async (mode) => {
    if (mode !== 'postgres') return state.sqlite;
    const postgres = await postgresRedisMode(resultsDir, { postgresUrl: process.env.BENCH_POSTGRES_URL, redisUrl: process.env.BENCH_REDIS_URL });
    started.push({ dispose: () => postgres.dispose() });
    const setup = gatewayEnvironment({ ...postgres, configFile: state.catalog, masterKey: state.masterKey, secret: state.secret });
    return { ...postgres, ...(await prepareGateway({ root, environment: setup, logFile: join(resultsDir, 'prepare-postgres.log') })) };
  };
  return { state, storageFor };
}

/** Stops what was started, newest first; dropping a schema that fails is reported, not thrown. */
export async function stopStarted(started) {
  for (const handle of started.reverse()) {
    if (handle.dispose) await handle.dispose().catch((error) => console.error(`cleanup failed: ${error.message}`));
    else await stopProcess(handle, 10_000);
  }
}

/**
 * What a tool comparing variants (after-burst.mjs, loop-blockers.mjs, memory-map.mjs) sets up from
 * its command line: its arguments, its variants and its numeric options with their defaults
 * (bench/lib/tool-options.mjs), the repository root, peerbench and the CPUs (toolSettings), the first
 * gateway port (BENCH_GW_PORT, default 18991), a fresh results folder named after the tool, and
 * the list of what it starts, for stopStarted.
 */
export function variantToolSetup(toolUrl, numberDefaults, { mayBeZero = [] } = {}) {
  const argv = process.argv.slice(2);
  const option = optionReader(argv);
  const toolFile = fileURLToPath(toolUrl);
  const root = resolve(dirname(toolFile), '..');
  return {
    argv,
    variants: readVariants(argv),
    numbers: numberOptions(option, numberDefaults, { mayBeZero }),
    root,
    ...toolSettings(root),
    firstPort: Number(process.env.BENCH_GW_PORT ?? 18991),
    resultsDir: mkdtempSync(join(tmpdir(), `gw-${basename(toolFile, '.mjs')}-`)),
    started: [],
  };
}

/**
 * The start of a variant tool's run, on the embedded defaults or (`mode` 'postgres') a fresh
 * Postgres + Redis database the variants share: checks that the mock's port and one gateway port
 * per variant are free, starts the mock and prepares the gateway's data (startToolFixture), and
 * gives the chat body, the key's header and the measure() settings for windows of `seconds`.
 */
export async function prepareVariantRun(setup, seconds, { mode = 'sqlite' } = {}) {
  const { variants, root, peerDir, mockPort, loadCpus, firstPort, resultsDir, started } = setup;
  const ports = variants.map((_, index) => firstPort + index);
  for (const port of [mockPort, ...ports]) if (await portOpen(port)) throw new Error(`port ${port} is in use`);
  const { state, storageFor } = await startToolFixture({ root, peerDir, resultsDir, mockPort, loadCpus, started });
  const storage = await storageFor(mode);
  return {
    state,
    storage,
    bodyFile: join(peerDir, 'bodies', 'chat.json'),
    headers: `Authorization: Bearer ${storage.apiKey}`,
    settings: { peerDir, loadCpus, durationS: seconds, streamDurationS: seconds },
  };
}

/**
 * Gets each variant's gateway past its first compiles and pools before anything is counted: 3 s of
 * closed-loop chat at 32 connections, then 3 s of `rateSpec(target)`.
 */
export async function warmUpVariants(targets, { bodyFile, headers, settings }, rateSpec) {
  for (const target of targets) {
    console.error(`${target.variant.name}: warming up`);
    await measure({ kind: 'thr', url: target.url, bodyFile, headers, conns: 32 }, { ...settings, durationS: 3 });
    await measure(rateSpec(target), { ...settings, durationS: 3 });
  }
}

/**
 * One prepared gateway per variant, on consecutive ports from `firstPort`, pinned to `gwCpus`, each
 * with its variant's Node flags and settings; `probe(index)` may add a preload's flags before them
 * and its environment. Resolves when all listen: [{ variant, gateway, logFile, url }].
 */
export async function startVariantGateways({ root, variants, storage, state, firstPort, gwCpus, resultsDir, started, probe = () => ({ flags: '', env: {} }) }) {
  const targets = [];
  for (const [index, variant] of variants.entries()) {
    const port = firstPort + index;
    const logFile = join(resultsDir, `gw-${index}.log`);
    const added = probe(index);
    const env = gatewayEnvironment({ ...storage, configFile: state.catalog, masterKey: state.masterKey, secret: state.secret, port });
    const flags = [added.flags, variant.flags].filter(Boolean).join(' ');
    const gateway = startProcess({ command: join(root, 'bin/gw-server'), cwd: root, env: { ...env, ...variant.env, ...added.env, GW_NODE_FLAGS: flags }, cpus: gwCpus, logFile });
    started.push(gateway);
    await waitForListening(gateway, { port });
    targets.push({ variant, gateway, logFile, url: `http://127.0.0.1:${port}/v1/chat/completions` });
  }
  return targets;
}

/**
 * Asks a gateway's preloaded probe for what it recorded since the last time (SIGUSR2: the probe
 * writes `outputFile` and starts over), and waits for the file.
 */
export async function askProbe(gatewayPid, outputFile) {
  rmSync(outputFile, { force: true });
  process.kill(gatewayPid, 'SIGUSR2');
  for (let waited = 0; waited < 10_000; waited += 100) {
    await sleep(100);
    try {
      return JSON.parse(readFileSync(outputFile, 'utf8'));
    } catch {
      // not written yet
    }
  }
  throw new Error(`the gateway did not write what its probe recorded (${outputFile})`);
}

/**
 * What the probe tools (loop-blockers.mjs, async-resources.mjs) share: the mock and a prepared
 * embedded gateway per variant with the probe preloaded (`probe(index)`: its --import file and its
 * settings; `outputOf(index)`: the file it writes on SIGUSR2), warmed up, then per round (the
 * variant order alternating) a window of chat calls at `rate` a second for `seconds`, each
 * between two asks of the probe. Fails on a window with a bad answer. Resolves to each variant's
 * windows: [{ recorded, outcome }] per variant, `recorded` what the probe wrote for the window.
 */
export async function runProbedRateWindows(setup, { rounds, rate, seconds, probe, outputOf }) {
  const { variants, root, gwCpus, firstPort, resultsDir, started } = setup;
  const { state, storage, bodyFile, headers, settings } = await prepareVariantRun(setup, seconds);
  const targets = await startVariantGateways({ root, variants, storage, state, firstPort, gwCpus, resultsDir, started, probe });
  const rateSpec = (target) => ({ kind: 'rate', url: target.url, bodyFile, headers, marker: 'peerbench-mock', rate });
  await warmUpVariants(targets, { bodyFile, headers, settings }, rateSpec);
  const windows = targets.map(() => []);
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) {
      const index = targets.indexOf(target);
      console.error(`round ${round + 1}: ${target.variant.name}: ${rate} req/s for ${seconds} s`);
      await askProbe(target.gateway.pid, outputOf(index));
      const outcome = await measure(rateSpec(target), { ...settings, gatewayPid: target.gateway.pid });
      const recorded = await askProbe(target.gateway.pid, outputOf(index));
      if (!outcome.result?.latency_ms || badCount('rate', outcome.result) > 0) throw new Error(`${target.variant.name}: the window failed: ${JSON.stringify(outcome.result)}`);
      windows[index].push({ recorded, outcome });
    }
  }
  return windows;
}
