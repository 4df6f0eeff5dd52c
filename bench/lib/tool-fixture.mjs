// What the single-purpose bench tools (allocation-profile.mjs, call-timeline.mjs) share: peerbench's
// mock on the load CPUs with the benchmark's stream shape, a prepared embedded gateway
// (bench/prepare.mjs), on request a prepared Postgres + Redis one, and stopping it all again.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { runToEnd, startProcess, stopProcess, waitForListening } from './processes.mjs';
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
