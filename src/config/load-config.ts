import { join } from 'node:path';
import { configSchema, type Config } from './config-schema.js';

/** Environment variable → config field. The only place that reads process.env. */
const ENVIRONMENT_NAMES = {
  GW_HOST: 'host',
  GW_PORT: 'port',
  GW_DATABASE_URL: 'databaseUrl',
  GW_REDIS_URL: 'redisUrl',
  GW_CACHE_REDIS_URL: 'cacheRedisUrl',
  GW_DATA_DIR: 'dataDir',
  GW_MASTER_KEY: 'masterKey',
  GW_SECRET: 'secret',
  GW_CONFIG: 'configFile',
  GW_LOG_LEVEL: 'logLevel',
  GW_BODY_LIMIT_BYTES: 'bodyLimitBytes',
  GW_FILE_LIMIT_BYTES: 'fileLimitBytes',
  GW_REQUEST_TIMEOUT_MS: 'requestTimeoutMs',
  GW_LOG_FLUSH_INTERVAL_MS: 'logFlushIntervalMs',
  GW_LOG_BATCH_SIZE: 'logBatchSize',
  GW_REQUEST_LOG_RETENTION_DAYS: 'requestLogRetentionDays',
  GW_SQLITE_WRITER: 'sqliteWriter',
  GW_SQLITE_CACHE_KIB: 'sqliteCacheKib',
  GW_SHUTDOWN_GRACE_MS: 'shutdownGraceMs',
  GW_LOCAL_PROVIDER: 'localProvider',
  GW_METRICS_LISTEN: 'metricsListen',
  GW_WEBHOOK_ALLOWED_HOSTS: 'webhookAllowedHosts',
  GW_WEBHOOK_CA_FILE: 'webhookCaFile',
  GW_SMTP_URL: 'smtpUrl',
  GW_SMTP_FROM: 'smtpFrom',
  GW_PRINT_CREDENTIALS: 'printCredentials',
  GW_LOG_MESSAGE_CONTENTS: 'logMessageContents',
  GW_ADMISSION_OVERLAP: 'admissionOverlap',
  GW_CHANGE_FRESHNESS_MS: 'changeFreshnessMs',
  GW_ALLOWANCE_SHARE: 'allowanceShare',
  GW_UPSTREAM_CLIENT: 'upstreamClient',
  GW_UPSTREAM_POLL_US: 'upstreamPollUs',
  GW_HTTP_EDGE: 'httpEdge',
  GW_PUBLIC_URL: 'publicUrl',
  GW_BOOTSTRAP_API_KEY: 'bootstrapApiKey',
  GW_BOOTSTRAP_TIER: 'bootstrapTier',
  GW_BOOTSTRAP_CREDIT_USD: 'bootstrapCreditUsd',
  GW_DASHBOARD_DIR: 'dashboardDir',
} as const;

const LIST_FIELDS = new Set(['webhookAllowedHosts']);
const BOOLEAN_FIELDS = new Set(['localProvider', 'printCredentials', 'logMessageContents', 'admissionOverlap']);

export type ConfigOverrides = Partial<{ -readonly [K in keyof Config]: Config[K] }>;

/**
 * Builds the frozen Config from the environment plus explicit overrides (tests pass overrides).
 * A bad value stops start-up with a message naming the variable.
 */
export function loadConfig(environment: NodeJS.ProcessEnv = process.env, overrides: ConfigOverrides = {}): Config {
  const raw: Record<string, unknown> = {};
  for (const [variable, field] of Object.entries(ENVIRONMENT_NAMES)) {
    const value = environment[variable];
    if (value === undefined || value === '') continue;
    if (LIST_FIELDS.has(field)) raw[field] = value.split(',').map((item) => item.trim()).filter(Boolean);
    else if (BOOLEAN_FIELDS.has(field)) raw[field] = !['0', 'false', 'no', 'off'].includes(value.toLowerCase());
    else raw[field] = value;
  }
  // The OTLP exporter reads its own OTEL_* settings; here we only decide whether tracing is on.
  const otelEndpoint = environment.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || environment.OTEL_EXPORTER_OTLP_ENDPOINT;
  raw.tracing = environment.OTEL_SDK_DISABLED !== 'true' && (Boolean(otelEndpoint) || environment.OTEL_TRACES_EXPORTER === 'otlp');
  if (environment.OTEL_SERVICE_NAME) raw.serviceName = environment.OTEL_SERVICE_NAME;
  Object.assign(raw, overrides);
  // The embedded database lives in the data dir, beside the secret its key hashes depend on: moving
  // one without the other would leave every stored key unusable.
  if (raw.databaseUrl === undefined && typeof raw.dataDir === 'string' && raw.dataDir !== '') raw.databaseUrl = `sqlite:${join(raw.dataDir, 'gw.db')}`;
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const reverse = Object.fromEntries(Object.entries(ENVIRONMENT_NAMES).map(([variable, field]) => [field, variable]));
    const problems = parsed.error.issues.map((issue) => {
      const field = String(issue.path[0] ?? '');
      return `${reverse[field] ?? field}: ${issue.message}`;
    });
    throw new Error(`invalid configuration: ${problems.join('; ')}`);
  }
  return Object.freeze(parsed.data);
}
