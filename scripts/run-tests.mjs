#!/usr/bin/env node
// Runs every *.test.ts under src/, test/, packages/client/test and bench/lib with node's test runner (TypeScript via tsx).
// Arguments narrow the run to files whose path contains one of them: `npm test -- keys ratelimit`.
// Tests that need Postgres or Redis read GW_TEST_DATABASE_URL / GW_TEST_REDIS_URL and skip, saying so, without them.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const roots = ['src', 'test', 'packages/client/test', 'bench/lib'];
const files = [];
function walk(directory) {
  let entries;
  try {
    entries = readdirSync(directory);
  } catch {
    return;
  }
  for (const entry of entries) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    const path = join(directory, entry);
    if (statSync(path).isDirectory()) walk(path);
    else if (entry.endsWith('.test.ts')) files.push(path);
  }
}
roots.forEach(walk);
const filters = process.argv.slice(2);
const selected = files.filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter))).sort();
if (selected.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
if (!process.env.GW_TEST_DATABASE_URL) console.log('note: GW_TEST_DATABASE_URL is not set: Postgres store tests will be skipped');
if (!process.env.GW_TEST_REDIS_URL) console.log('note: GW_TEST_REDIS_URL is not set: Redis store tests will be skipped');
const concurrency = process.env.GW_TEST_CONCURRENCY ?? '2';
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...selected],
  { stdio: 'inherit', env: { ...process.env, GW_LOG_LEVEL: process.env.GW_LOG_LEVEL ?? 'silent' } },
);
process.exit(result.status ?? 1);
