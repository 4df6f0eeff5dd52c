import { createGateway, type Gateway } from '../../src/app.js';
import { loadConfig, type ConfigOverrides } from '../../src/config/load-config.js';
import { tempDirectory, TEST_DATABASES } from './test-databases.js';

export interface RunningGateway {
  gateway: Gateway;
  /** e.g. http://127.0.0.1:54321 */
  url: string;
  /** OpenAI base URL: `${url}/v1`. */
  baseURL: string;
  masterKey: string;
  /** The bootstrap org's first key. */
  apiKey: string;
  orgId: string;
  close(): Promise<void>;
}

export interface StartOptions {
  database?: 'sqlite' | 'postgres';
  config?: ConfigOverrides;
  environment?: NodeJS.ProcessEnv;
}

/** Starts a real gateway on 127.0.0.1 with an ephemeral port and a fresh database. */
export async function startGateway(options: StartOptions = {}): Promise<RunningGateway> {
  const database = TEST_DATABASES.find((candidate) => candidate.name === (options.database ?? 'sqlite'))!;
  const dataDir = tempDirectory();
  const config = loadConfig(
    {},
    {
      host: '127.0.0.1',
      port: 0,
      databaseUrl: await database.create(),
      dataDir,
      masterKey: 'gw-master-test-credential-0123456789',
      secret: 'test-secret-0123456789-abcdefghij',
      logLevel: (process.env.GW_TEST_LOG_LEVEL as 'silent' | undefined) ?? 'silent',
      logFlushIntervalMs: 50,
      shutdownGraceMs: 2000,
      // Tier 1's 10 requests per second would throttle a test file; rate-limit tests set their own limits.
      bootstrapTier: 'enterprise',
      ...options.config,
    },
  );
  const gateway = await createGateway(config, options.environment ?? {});
  const url = await gateway.server.listen({ host: '127.0.0.1', port: 0 });
  return {
    gateway,
    url,
    baseURL: `${url}/v1`,
    masterKey: config.masterKey!,
    apiKey: gateway.bootstrap.firstKey!,
    orgId: gateway.bootstrap.orgId!,
    close: () => gateway.close(),
  };
}

/** Calls the admin API with the master credential. */
export async function adminRequest<T = any>(
  running: RunningGateway,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const response = await fetch(running.url + path, {
    method,
    headers: { authorization: `Bearer ${running.masterKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}
