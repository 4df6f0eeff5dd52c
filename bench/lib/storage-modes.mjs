// The two storage modes a run measures: the embedded defaults (SQLite in the data dir, in-memory
// counters) and Postgres + Redis (a fresh schema, Redis db 15 flushed before the run).
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';

export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379/15';

export function sqliteMode(resultsDir) {
  const dataDir = join(resultsDir, 'data-sqlite');
  mkdirSync(dataDir, { recursive: true });
  return { name: 'sqlite', label: 'SQLite + in-memory counters (defaults)', dataDir, databaseUrl: `sqlite:${join(dataDir, 'gw.db')}`, redisUrl: undefined, async dispose() {} };
}

/** A fresh Postgres schema (dropped by dispose) and a flushed Redis database. */
export async function postgresRedisMode(resultsDir, { postgresUrl = DEFAULT_POSTGRES_URL, redisUrl = DEFAULT_REDIS_URL } = {}) {
  const dataDir = join(resultsDir, 'data-postgres');
  mkdirSync(dataDir, { recursive: true });
  const schema = `gw_bench_${randomBytes(5).toString('hex')}`;
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    await client.query(`create schema ${schema}`);
  } finally {
    await client.end();
  }
  const url = new URL(postgresUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    await redis.flushdb();
  } finally {
    redis.disconnect();
  }
  return {
    name: 'postgres',
    label: 'Postgres + Redis',
    dataDir,
    databaseUrl: url.toString(),
    redisUrl,
    schema,
    async dispose() {
      const cleanup = new pg.Client({ connectionString: postgresUrl });
      await cleanup.connect();
      try {
        await cleanup.query(`drop schema if exists ${schema} cascade`);
      } finally {
        await cleanup.end();
      }
    },
  };
}
