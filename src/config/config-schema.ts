import { z } from 'zod';

/** Server configuration, read once at start-up from the environment (and GW_CONFIG). Units are in the names. */
export const configSchema = z.object({
  host: z.string().default('127.0.0.1'),
  port: z.coerce.number().int().min(0).max(65535).default(4000),
  databaseUrl: z.string().default('sqlite:./data/gw.db'),
  redisUrl: z.string().optional(),
  /** A Redis of the response cache's own; unset: the cache is in GW_REDIS_URL's Redis (or in process). */
  cacheRedisUrl: z.string().optional(),
  /** Directory for the embedded database and the generated server secret. */
  dataDir: z.string().default('./data'),
  /** Master credential; generated and printed once on first start when unset. */
  masterKey: z.string().min(16).optional(),
  /** Root secret: HMAC key for virtual-key hashes and the AES-256-GCM key for stored credentials (HKDF-derived). */
  secret: z.string().min(16).optional(),
  configFile: z.string().optional(),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Largest accepted JSON body (413 past it). */
  bodyLimitBytes: z.coerce.number().int().min(1024).default(10 * 1024 * 1024),
  /** Largest uploaded file in multipart requests (images/edits, audio/transcriptions). */
  fileLimitBytes: z.coerce.number().int().min(1024).default(25 * 1024 * 1024),
  /** Upper bound on one request's total time, retries included. */
  requestTimeoutMs: z.coerce.number().int().min(100).default(600_000),
  /**
   * Batch window of the request log and spend ledger writer: at most this much is lost on a crash.
   * Unset: 1000 ms on the embedded SQLite file, 200 ms on Postgres (see flushIntervalFor in app.ts).
   */
  logFlushIntervalMs: z.coerce.number().int().min(10).optional(),
  logBatchSize: z.coerce.number().int().min(1).default(500),
  /** Request-log rows older than this many days are deleted (hourly, in small batches); 0 keeps them for ever. */
  requestLogRetentionDays: z.coerce.number().int().min(0).default(90),
  /** Embedded SQLite only: batched inserts on a writer thread, on the main thread in small slices, or `auto` (the thread when more than one CPU is available). */
  sqliteWriter: z.enum(['auto', 'thread', 'inline']).default('auto'),
  /**
   * Embedded SQLite only: page cache per connection, in KiB. The batched appends touch only the
   * right-hand edge of each index, so a small cache serves them; the driver's default (16 MiB) was
   * most of the resident-memory growth under load.
   */
  sqliteCacheKib: z.coerce.number().int().min(256).default(2048),
  /** On SIGTERM: how long in-flight calls (streams included) may take before the process exits. */
  shutdownGraceMs: z.coerce.number().int().min(0).default(30_000),
  /** Serve the built-in deterministic `local` provider's models. */
  localProvider: z.coerce.boolean().default(true),
  /** Extra bind address for /metrics without auth (e.g. 127.0.0.1:9464); unset = /metrics on the main port with the master key. */
  metricsListen: z.string().optional(),
  /** Webhook test mode: hosts allowed despite the private-address rules, and a CA to trust. Off by default. */
  webhookAllowedHosts: z.array(z.string()).default([]),
  webhookCaFile: z.string().optional(),
  smtpUrl: z.string().optional(),
  smtpFrom: z.string().default('gw <gw@localhost>'),
  /** First start on an empty database: the first key's value (for automation), the default org's tier and starting credit. */
  bootstrapApiKey: z.string().regex(/^sk-gw-[0-9A-Za-z]{32,128}$/, 'sk-gw- followed by 32 to 128 letters and digits').optional(),
  bootstrapTier: z.enum(['tier1', 'tier2', 'tier3', 'enterprise']).default('tier1'),
  bootstrapCreditUsd: z.string().regex(/^\d+(\.\d{1,9})?$/).default('100.00'),
  /** Print the first org's key and admin credential on first start. */
  printCredentials: z.coerce.boolean().default(true),
  /**
   * With shared stores (Redis), a text call's upstream request leaves while its admission (key
   * version, rate limits, credit hold) is still being answered; its answer waits for admission,
   * and a refusal cancels it (docs/pipeline.md, "Overlapping the upstream request"). On by default.
   */
  admissionOverlap: z.coerce.boolean().default(true),
  /**
   * With Redis: how long an instance trusts the shared change version it last read (ms). Each
   * instance reads it every quarter of this in the background instead of on every call, and a change
   * (key revoked, settings, catalog) is acknowledged only after this long, so no instance serves
   * under the old version once the change has returned. 0 reads it on every call.
   */
  changeFreshnessMs: z.coerce.number().int().min(0).max(10_000).default(100),
  /**
   * With Redis: an instance claims a share of a rate-limit window's room, and of an account's
   * credit, at once (at most 1/N of the limit, or of what the account has left) and admits calls
   * from it without a round trip (docs/pipeline.md, "Allowances"). 0 asks Redis on every call.
   */
  allowanceShare: z.coerce.number().int().min(0).max(1_000_000).default(32),
  /**
   * Which HTTP client sends upstream requests, streamed or not: gw's own HTTP/1.1 client, or
   * undici. A way back, should an upstream misbehave with the former.
   */
  upstreamClient: z.enum(['http1', 'undici']).default('http1'),
  /**
   * gw's own upstream client: for an upstream whose answers usually start within this many µs,
   * the event loop polls for the answer instead of sleeping until the kernel wakes it, for at most
   * this long per request (docs/pipeline.md, "Polling for answers due at once"). 0 never polls.
   */
  upstreamPollUs: z.coerce.number().int().min(0).max(100_000).default(500),
  /**
   * Who reads client connections: gw's HTTP edge, which answers JSON inference calls itself and
   * hands every other request to node:http (docs/pipeline.md, "gw's HTTP edge"), or node:http for
   * every request. A way back, should a client misbehave with the former.
   */
  httpEdge: z.enum(['gw', 'node']).default('gw'),
  /** Log message contents in the request log (off by default). */
  logMessageContents: z.coerce.boolean().default(false),
  /** Directory of the built dashboard (index.html + assets); default dist/dashboard at the package root. */
  dashboardDir: z.string().optional(),
  /** OpenTelemetry traces: on when an OTLP endpoint (or OTEL_TRACES_EXPORTER=otlp) is configured in the standard OTEL_* variables. */
  tracing: z.coerce.boolean().default(false),
  serviceName: z.string().default('gw'),
  /** Public URL of the gateway, for links in notifications and the dashboard. */
  publicUrl: z.string().optional(),
});

export type Config = Readonly<z.infer<typeof configSchema>>;
