#!/usr/bin/env node
// Prepares the gateway that peerbench starts with GW_CMD: a fresh data dir (SQLite), the catalog
// file pointing at peerbench's mock, raised org limits, credit and a key. Writes state.json and
// gw.env (shell exports for GW_CMD) into the results directory.
//
//   node bench/prepare.mjs --results DIR --upstream http://127.0.0.1:18080/v1 --root REPO
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gatewayEnvironment, prepareGateway, resultPaths, writeCatalogFile } from './lib/gateway-setup.mjs';
import { sqliteMode } from './lib/storage-modes.mjs';

const options = {};
for (let index = 2; index < process.argv.length; index += 2) options[process.argv[index].replace(/^--/, '')] = process.argv[index + 1];
if (!options.results || !options.upstream || !options.root) {
  console.error('usage: prepare.mjs --results DIR --upstream URL --root REPO');
  process.exit(2);
}

const paths = resultPaths(options.results);
writeCatalogFile(paths.catalog, options.upstream);
const masterKey = `gw-master-${randomBytes(24).toString('hex')}`;
const secret = randomBytes(32).toString('hex');
const mode = sqliteMode(options.results);
const environment = gatewayEnvironment({ ...mode, configFile: paths.catalog, masterKey, secret });
const prepared = await prepareGateway({ root: options.root, environment, logFile: join(options.results, 'prepare-sqlite.log') });

const state = { upstream: options.upstream, masterKey, secret, catalog: paths.catalog, sqlite: { ...mode, ...prepared } };
writeFileSync(paths.state, `${JSON.stringify(state, null, 2)}\n`);

// Exports for the shell that runs peerbench (GW_PORT comes from peerbench itself).
const exported = ['GW_HOST', 'GW_DATA_DIR', 'GW_DATABASE_URL', 'GW_CONFIG', 'GW_MASTER_KEY', 'GW_SECRET', 'GW_LOG_LEVEL', 'GW_PRINT_CREDENTIALS', 'BENCH_UPSTREAM_KEY'];
const quote = (value) => `'${String(value).replaceAll("'", "'\\''")}'`;
const lines = exported.map((name) => `export ${name}=${quote(environment[name])}`);
lines.push('unset GW_REDIS_URL');
lines.push(`BENCH_API_KEY=${quote(prepared.apiKey)}`);
writeFileSync(join(options.results, 'gw.env'), `${lines.join('\n')}\n`, { mode: 0o600 });
for (const note of prepared.notes) console.error(`prepare: ${note}`);
console.error(`prepare: org ${prepared.orgId} ready (enterprise tier, raised limits, cache default off), key issued`);
