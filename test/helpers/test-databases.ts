import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { Redis, type RedisOptions } from 'ioredis';
import pg from 'pg';

/** The database URLs a store or e2e suite runs against: SQLite always, Postgres when GW_TEST_DATABASE_URL is set. */
export interface TestDatabase {
  name: 'sqlite' | 'postgres';
  /** Creates an isolated database (a temp file, or a fresh Postgres schema) and returns its URL. */
  create(): Promise<string>;
  skip: string | false;
}

const postgresUrl = process.env.GW_TEST_DATABASE_URL;

export const TEST_DATABASES: TestDatabase[] = [
  {
    name: 'sqlite',
    skip: false,
    async create() {
      const directory = mkdtempSync(join(tmpdir(), 'gw-test-'));
      return `sqlite:${join(directory, 'gw.db')}`;
    },
  },
  {
    name: 'postgres',
    skip: postgresUrl ? false : 'GW_TEST_DATABASE_URL is not set (Postgres tests skipped)',
    async create() {
      const schema = `gw_test_${randomBytes(6).toString('hex')}`;
      const client = new pg.Client({ connectionString: postgresUrl });
      await client.connect();
      await client.query(`create schema ${schema}`);
      await client.end();
      const url = new URL(postgresUrl!);
      url.searchParams.set('options', `-c search_path=${schema}`);
      return url.toString();
    },
  },
];

export const TEST_REDIS_URL = process.env.GW_TEST_REDIS_URL;
export const REDIS_SKIP: string | false = TEST_REDIS_URL ? false : 'GW_TEST_REDIS_URL is not set (Redis tests skipped)';

export function tempDirectory(): string {
  return mkdtempSync(join(tmpdir(), 'gw-test-'));
}

/**
 * Connections to the test Redis for one test file, each disconnected once the file's tests are done
 * (call it at the top of the file: it registers the `after` hook there).
 */
export function testRedisConnections(): (options?: RedisOptions) => Redis {
  const connections: Redis[] = [];
  after(() => {
    for (const connection of connections) connection.disconnect();
  });
  return (options = {}) => {
    const redis = new Redis(TEST_REDIS_URL!, { maxRetriesPerRequest: 1, ...options });
    connections.push(redis);
    return redis;
  };
}
