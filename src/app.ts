import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from './config/config-schema.js';
import { createDatabase, defaultBatchFlushIntervalMs, type DatabaseHandle } from './db/create-database.js';
import { migrateToLatest } from './db/migrate.js';
import { createLocalChangeFeed, createRedisChangeFeed, type ChangeFeed } from './lib/change-feed.js';
import { createEventBus, type EventBus } from './lib/event-bus.js';
import { createSecretBox } from './lib/secret-box.js';
import { loadServerSecrets } from './lib/server-secrets.js';
import { createKeyAuthenticator, type KeyAuthenticator } from './keys/key-authenticator.js';
import { createKeyIssuer, type KeyIssuer } from './keys/key-issuer.js';
import { createKeySpend } from './keys/key-spend.js';
import { createSqlTenancyStore, type TenancyStore } from './tenancy/tenancy-store.js';
import { loadMasterCredential } from './admin/master-credential.js';
import { createManagementAuth } from './admin/create-management-auth.js';
import { createDashboardSessions } from './dashboard/dashboard-sessions.js';
import { findDashboardDirectory } from './dashboard/dashboard-directory.js';
import { createUsageReport } from './dashboard/usage-report.js';
import { createRequestLogQuery } from './dashboard/request-log-query.js';
import { registerDashboardRoutes } from './http/routes/dashboard-routes.js';
import { registerDashboardUsageRoutes } from './http/routes/dashboard-usage-routes.js';
import { registerDashboardPromptRoutes } from './http/routes/dashboard-prompt-routes.js';
import { buildServer } from './http/build-server.js';
import { registerInferenceRoutes } from './http/routes/inference-routes.js';
import { serveJsonRoutesDirectly } from './http/direct-json-routes.js';
import { registerModelRoutes } from './http/routes/model-routes.js';
import { registerSystemRoutes } from './http/routes/system-routes.js';
import { registerTenancyAdminRoutes } from './http/routes/tenancy-admin-routes.js';
import type { ModelDirectory } from './http/model-access.js';
import { createSqlRequestRecorder, type RequestRecorder } from './observability/request-recorder.js';
import { createAdmissionGateStage, createUpstreamOverlap } from './pipeline/admission.js';
import { composeStages } from './pipeline/compose-stages.js';
import { createKeyConfirmationStage } from './keys/key-confirmation-stage.js';
import type { Next, Stage } from './pipeline/stage.js';
import { OPERATIONS, type Operation } from './protocol/endpoints.js';
import { LOCAL_MODELS } from './providers/local/local-models.js';
import { createMetering, type Metering } from './metering/create-metering.js';
import { registerCreditRoutes } from './http/routes/credit-routes.js';
import { parseUsdNanos } from './metering/format-usd.js';
import { createAlerting, type Alerting } from './alerts/create-alerting.js';
import { registerChannelRoutes } from './http/routes/channel-routes.js';
import { registerPricingRoutes } from './http/routes/pricing-routes.js';
import { createLocalProvider } from './providers/local/create-local-provider.js';
import { createUpstreamClient } from './providers/http/upstream-client.js';
import { createProviderRegistry } from './providers/provider-registry.js';
import type { Provider } from './providers/provider.js';
import { createModelCatalog, type ModelCatalog } from './routing/model-catalog.js';
import { loadCatalogFile, routingSettingsOf } from './routing/catalog-file.js';
import { registerDeploymentRoutes } from './http/routes/deployment-routes.js';
import { createRouter, type Router } from './routing/create-router.js';
import { createDeploymentCapacity } from './routing/deployment-capacity.js';
import { createCircuitBreaker } from './routing/circuit-breaker.js';
import { createMemoryCircuitStore } from './routing/memory-circuit-store.js';
import { createMemoryHealthStore } from './routing/memory-health-store.js';
import { createRedisCircuitStore } from './routing/redis-circuit-store.js';
import { createRedisHealthStore } from './routing/redis-health-store.js';
import { bootstrapFirstStart, type BootstrapResult } from './admin/bootstrap-first-start.js';
import { createSqlVideoStore } from './videos/video-store.js';
import { createVideoStage } from './videos/video-stage.js';
import { createLocalVideoJobBackend, createOpenAIVideoJobBackend, type VideoJobBackend } from './videos/video-job-backend.js';
import { startVideoJobRunner } from './videos/video-job-runner.js';
import { createVideoRefunds } from './videos/video-refunds.js';
import { startRequestLogRetention, type RequestLogRetention } from './observability/request-log-retention.js';
import { registerVideoRoutes } from './http/routes/video-routes.js';
import { newId } from './lib/ids.js';
import { coalesceTurnWrites } from './lib/redis-turn-writes.js';
import { cl100k } from './tokenizer/cl100k.js';
import { createGatewayMetrics } from './observability/gateway-metrics.js';
import { registerMetricsRoute, startMetricsListener } from './http/routes/metrics-routes.js';
import { startTracing, traceStage, traceUpstream } from './observability/tracing.js';
import { createGuardrails } from './guardrails/create-guardrails.js';
import { guardedPostFrom } from './guardrails/guardrail-webhook.js';
import { createTemplates } from './templates/create-templates.js';
import { createExperiments } from './experiments/create-experiments.js';
import { createCaching } from './cache/create-caching.js';
import { registerGuardrailRoutes } from './http/routes/guardrail-routes.js';
import { registerPromptRoutes } from './http/routes/prompt-routes.js';
import { registerExperimentRoutes } from './http/routes/experiment-routes.js';

export interface GatewayServices {
  config: Config;
  database: DatabaseHandle;
  redis: Redis | undefined;
  tenancy: TenancyStore;
  keys: KeyAuthenticator;
  issuer: KeyIssuer;
  changes: ChangeFeed;
  events: EventBus;
  catalog: ModelCatalog;
  router: Router;
  recorder: RequestRecorder;
  /** Keeps the request and guardrail logs to GW_REQUEST_LOG_RETENTION_DAYS (hourly rounds). */
  logRetention: RequestLogRetention;
  metering: Metering;
  alerting: Alerting;
  providers: Map<string, Provider>;
}

export interface Gateway {
  server: FastifyInstance;
  services: GatewayServices;
  bootstrap: BootstrapResult;
  /** Stops accepting, waits for in-flight calls (bounded by shutdownGraceMs), flushes logs, closes stores. */
  close(): Promise<void>;
  /** Number of inference calls in progress (streams included). */
  inflight(): number;
}

/** Credit granted to the org created on first start: 10 USD in nano-USD (docs/money.md). */

/** Redis connections fail fast when the server is away, so calls get their documented error instead of hanging. */
async function connectRedis(url: string, options: { coalesceWrites: boolean }): Promise<Redis> {
  // Loaded only when GW_REDIS_URL is set: an embedded install never pays for the client.
  const { Redis } = await import('ioredis');
  // Not ioredis's auto-pipelining: it waits for setImmediate, behind every other ready socket
  // (at 500 req/s p50 rose from ~1.0 to 1.3–1.8 ms and p99 doubled). coalesceTurnWrites batches
  // within the turn instead (lib/redis-turn-writes.ts).
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2000 });
  redis.on('error', () => {});
  if (options.coalesceWrites) coalesceTurnWrites(redis);
  await redis.connect();
  return redis;
}

/**
 * The composition root: every store, provider and stage is created here, in pipeline order, and
 * nothing else knows which backend runs. `environment` is only used to resolve api_key_env names
 * in the GW_CONFIG file.
 */
export async function createGateway(config: Config, environment: NodeJS.ProcessEnv = {}): Promise<Gateway> {
  // The tokenizer builds its tables on first use; pay that at start, not on the first call.
  cl100k().countTokens('warm up the tokenizer');
  const secrets = loadServerSecrets(config.secret, config.dataDir);
  const secretBox = createSecretBox(secrets.encryptionKey);
  const database = await createDatabase(config.databaseUrl, { sqliteWriter: config.sqliteWriter, sqliteCacheKib: config.sqliteCacheKib });
  const logFlushIntervalMs = config.logFlushIntervalMs ?? defaultBatchFlushIntervalMs(database.dialect);
  // A newer version already migrated (rolling upgrade): start on its schema, and say so once the logger exists.
  let newerSchema: string[] = [];
  await migrateToLatest(database.db, { onSchemaAhead: (unknown) => (newerSchema = unknown) });

  const redis = config.redisUrl ? await connectRedis(config.redisUrl, { coalesceWrites: true }) : undefined;
  const redisSubscriber = redis ? await connectRedis(config.redisUrl!, { coalesceWrites: false }) : undefined;
  const changes =
    redis && redisSubscriber
      ? createRedisChangeFeed(redis, redisSubscriber, {
          freshnessMs: config.changeFreshnessMs,
          // Publishes happen once the server (and its logger) exists.
          onPublishError: (error, notice, attempt) => server.log.warn({ err: error, notice, attempt }, 'change notice not sent; retrying in the background'),
        })
      : createLocalChangeFeed();

  const server = await buildServer({
    bodyLimitBytes: config.bodyLimitBytes,
    fileLimitBytes: config.fileLimitBytes,
    logLevel: config.logLevel,
    version: '0.1.0',
  });
  const logger = server.log;
  if (newerSchema.length > 0) logger.warn({ migrations: newerSchema }, 'the database schema is newer than this version; started without migrating');
  const events = createEventBus((error) => logger.error({ err: error }, 'event listener failed'));

  const tenancy = createSqlTenancyStore(database.db);
  const keys = createKeyAuthenticator({ store: tenancy, hashKey: secrets.keyHashKey, changes });
  const issuer = createKeyIssuer({ store: tenancy, hashKey: secrets.keyHashKey, changes, events });
  const master = await loadMasterCredential(database.db, secrets.keyHashKey, config.masterKey);
  // Dashboard sessions (HMAC-signed cookie + CSRF) are one more way to reach the management API.
  const dashboardSessions = createDashboardSessions({ sessionKey: secrets.sessionKey, store: tenancy });
  const managementAuth = createManagementAuth({ keys, master: master.credential, sessions: dashboardSessions });
  const alerting: Alerting = createAlerting({ db: database.db, secretBox, eventBus: events, logger, config });
  alerting.dispatcher.start();
  registerChannelRoutes(server, {
    auth: managementAuth,
    channels: alerting.channels,
    alertRoutes: alerting.alertRoutes,
    deliveryLog: alerting.deliveryLog,
    delivery: alerting.delivery,
    urlGuard: alerting.http.guard,
    orgExists: async (orgId) => (await tenancy.getOrganization(orgId)) !== undefined,
  });

  const fileConfig = config.configFile ? await loadCatalogFile(config.configFile, environment) : undefined;
  const catalog = await createModelCatalog({
    db: database.db,
    fileConfig,
    builtinModels: config.localProvider ? LOCAL_MODELS : [],
    credentialVault: secretBox,
    logger,
  });
  changes.subscribe((notice) => {
    if (notice.kind === 'catalog' || notice.kind === 'all') {
      catalog.reload().catch((error) => logger.error({ err: error }, 'catalog reload failed'));
    }
  });

  const upstream = createUpstreamClient({ upstreamClient: config.upstreamClient, answerPollMs: config.upstreamPollUs / 1000 });
  const local = createLocalProvider();
  const providers = createProviderRegistry(upstream, [local], {
    onUsageRejected: (rejected) => logger.warn(rejected, 'upstream usage not billable; the call is metered from an estimate'),
  });

  const routing = routingSettingsOf(fileConfig);
  // With Redis, both stores hold a few milliseconds of outcomes in memory (flushed on close).
  const sharedStateError = (error: unknown) => logger.warn({ err: error }, 'routing statistics not written to Redis');
  const circuitStore = redis
    ? createRedisCircuitStore(redis, { ...routing.circuit, onError: sharedStateError })
    : createMemoryCircuitStore(routing.circuit);
  const healthStore = redis ? createRedisHealthStore(redis, { onError: sharedStateError }) : createMemoryHealthStore();
  const breaker = createCircuitBreaker({
    store: circuitStore,
    eventBus: events,
    now: Date.now,
    logger,
  });

  // Credits, budgets, spend and rate limits (docs/money.md, docs/rate-limits.md).
  const metering = await createMetering({
    db: database.db,
    bulkInsert: database.bulkInsert,
    redis,
    events,
    changes,
    catalog,
    builtinModels: config.localProvider ? LOCAL_MODELS : [],
    // A model's `pricing` in the GW_CONFIG file is the file layer of the price catalog.
    fileOverrides: Object.fromEntries((fileConfig?.models ?? []).flatMap((model) => (model.pricing ? [[model.id, model.pricing]] : []))),
    ledgerFlushIntervalMs: logFlushIntervalMs,
    ledgerBatchSize: config.logBatchSize,
    reservationTtlMs: config.requestTimeoutMs + 60_000,
    allowanceShare: config.allowanceShare,
    onError: (error, context) => logger.error({ err: error }, context),
  });

  const router = createRouter({
    catalog,
    providers,
    breaker,
    health: healthStore,
    eventBus: events,
    logger,
    requestTimeoutMs: config.requestTimeoutMs,
    retryPolicy: routing.retryPolicy,
    capacity: createDeploymentCapacity(metering.counters),
  });

  const recorder = createSqlRequestRecorder(database.bulkInsert, {
    intervalMs: logFlushIntervalMs,
    batchSize: config.logBatchSize,
    onError: (error) => logger.error({ err: error }, 'request log write failed; will retry'),
  });

  const instanceId = newId();
  const videos = createSqlVideoStore(database.db);
  const videoBackends = new Map<string, VideoJobBackend>([
    ['local', createLocalVideoJobBackend(local.video)],
    ['openai', createOpenAIVideoJobBackend(upstream)],
  ]);
  const logRetention = startRequestLogRetention({
    db: database.db,
    retentionDays: config.requestLogRetentionDays,
    instanceId,
    // On the embedded file a DELETE holds the event loop: 100 rows are ~0.7 ms (500 were ~2.7 ms)
    // and still ~4,800 rows a second with the pauses. Postgres deletes off the event loop.
    batchRows: database.dialect === 'sqlite' ? 100 : 1000,
    onPruned: (rows) => logger.info({ rows, retentionDays: config.requestLogRetentionDays }, 'request log pruned'),
    onError: (error) => logger.error({ err: error }, 'request log pruning failed; will retry next round'),
  });
  const videoRunner = startVideoJobRunner({
    db: database.db,
    store: videos,
    backends: videoBackends,
    targetOf: (deploymentId) => catalog.target(deploymentId),
    refunds: createVideoRefunds({
      db: database.db,
      store: videos,
      gate: metering.gate,
      seeder: metering.seeder,
      flushLedger: () => metering.ledger.flush(),
    }),
    instanceId,
    logger,
  });

  // The catalog as the edge, the A/B test stage (variant models) and the experiment routes read it.
  const localOperations = new Map(LOCAL_MODELS.map((model) => [model.id, model.operations]));
  const models: ModelDirectory = {
    has: (modelId) => catalog.get(modelId) !== undefined,
    supports(modelId, operation) {
      const route = catalog.get(modelId);
      if (!route) return false;
      return route.deployments.some((deployment) => {
        if (!deployment.enabled) return false;
        if (deployment.provider === 'local') return localOperations.get(deployment.upstreamModel)?.includes(operation) ?? false;
        return providers.get(deployment.provider)?.operations.has(operation) ?? false;
      });
    },
  };

  // Guardrails, prompt templates, A/B tests and the response cache (issue 5).
  const featureErrors = (error: unknown, context: string) => logger.error({ err: error }, context);
  const guardrails = createGuardrails({
    db: database.db,
    eventBus: events,
    changes,
    post: guardedPostFrom(alerting.http),
    logFlushIntervalMs,
    logBatchSize: config.logBatchSize,
    onError: featureErrors,
    onWarning: (context, message) => logger.warn(context, message),
  });
  const templates = createTemplates({ db: database.db, models, changes, renderedCharsLimit: config.bodyLimitBytes });
  const experiments = createExperiments({ db: database.db, models, changes, statsFlushIntervalMs: logFlushIntervalMs, onError: featureErrors });
  // GW_CACHE_REDIS_URL moves the cache off the Redis that holds credits and limits (docs/deployment.md, "Redis memory").
  const cacheRedis = config.cacheRedisUrl ? await connectRedis(config.cacheRedisUrl, { coalesceWrites: true }) : redis;
  const caching = createCaching({ redis: cacheRedis, onError: featureErrors });

  // Admission (pipeline/admission.ts): the key confirmation and the rate limit are asked at once and
  // answered together with the meter's credit hold; the gate keeps everything else behind them.
  const keyConfirmation = createKeyConfirmationStage();
  const admissionGate = createAdmissionGateStage({
    overlap: config.admissionOverlap ? createUpstreamOverlap({ storesReachable: () => redis === undefined || redis.status === 'ready' }) : undefined,
  });
  // The spec's "Features" column, per operation, in pipeline order.
  const stagesFor = (operation: Operation): Stage[] => {
    // Admission first (key confirmation, rate limit: cheap refusals), then the meter, which sits outside the cache so hits are recorded at cost 0.
    // Chat: A/B test before the template (a variant may pin a template version), input guardrails
    // before the meter (a block is free), output guardrails outside the cache (a hit is checked under the
    // caller's guardrails, and the cache stores the upstream answer, not one some caller's guardrails passed).
    if (operation === 'chat') {
      return [
        keyConfirmation,
        metering.rateLimitStage,
        experiments.stage,
        templates.stage,
        guardrails.inputStage,
        metering.meterStage,
        guardrails.outputStage,
        caching.stage,
        admissionGate,
      ];
    }
    const stages: Stage[] = [keyConfirmation, metering.rateLimitStage, metering.meterStage];
    if (operation === 'completion' || operation === 'embedding') stages.push(caching.stage);
    if (operation === 'video') stages.push(createVideoStage(videos));
    stages.push(admissionGate);
    return stages;
  };
  const tracing = await startTracing(config.tracing, config.serviceName);
  const tracer = tracing.tracer;
  const terminal = tracer ? traceUpstream(router.route, tracer) : router.route;
  const pipelines = Object.fromEntries(
    OPERATIONS.map((operation) => {
      const stages = stagesFor(operation);
      return [operation, composeStages(tracer ? stages.map((stage) => traceStage(stage, tracer)) : stages, terminal)];
    }),
  ) as Record<Operation, Next>;

  const firstModelFor = (operation: Operation) => () => catalog.list().find((model) => models.supports(model.id, operation))?.id;

  let inflightCount = 0;
  let shuttingDown = false;
  const inflight = { add: () => void inflightCount++, done: () => void inflightCount-- };

  const jsonHandlers = registerInferenceRoutes(
    server,
    { keys, models, recorder, inflight, logMessageContents: config.logMessageContents },
    { pipelines, defaultModels: { moderation: firstModelFor('moderation'), image_edit: firstModelFor('image_edit') } },
  );
  const httpEdge = serveJsonRoutesDirectly(server.server, {
    handlers: jsonHandlers,
    bodyLimitBytes: config.bodyLimitBytes,
    logger,
    isClosing: () => shuttingDown,
    edge: config.httpEdge === 'gw',
  });
  registerModelRoutes(server, { keys, catalog, changes });
  const orgExists = async (orgId: string) => (await tenancy.getOrganization(orgId)) !== undefined;
  registerCreditRoutes(server, { auth: managementAuth, credits: metering.credits, ledger: metering.ledger, orgExists });
  registerPricingRoutes(server, { auth: managementAuth, pricing: metering.pricing, catalog, orgExists });
  registerVideoRoutes(server, { auth: managementAuth, store: videos, backends: videoBackends, targetOf: (deploymentId) => catalog.target(deploymentId) });
  const keySpend = createKeySpend(database.db, { flush: () => metering.ledger.flush() });
  registerTenancyAdminRoutes(server, { auth: managementAuth, store: tenancy, issuer, changes, spend: keySpend });
  registerDeploymentRoutes(server, { auth: managementAuth, db: database.db, catalog, router, secretBox, changes, providers });
  registerGuardrailRoutes(server, { auth: managementAuth, store: guardrails.store, logWriter: guardrails.logWriter, urlGuard: alerting.http.guard, orgExists });
  registerPromptRoutes(server, { auth: managementAuth, store: templates.store, orgExists });
  registerDashboardPromptRoutes(server, { auth: managementAuth, templates: templates.store });
  registerExperimentRoutes(server, {
    auth: managementAuth,
    store: experiments.store,
    stats: experiments.stats,
    templates: templates.store,
    orgExists,
    models,
    enabledModels: async (orgId) => (await tenancy.getOrganization(orgId))?.enabledModels ?? null,
  });
  registerDashboardRoutes(server, { sessions: dashboardSessions, keys, master: master.credential, staticDirectory: findDashboardDirectory(config.dashboardDir) });
  registerDashboardUsageRoutes(server, {
    auth: managementAuth,
    usage: createUsageReport(database.db),
    // Contents are in the log only for calls recorded while content logging was on (globally or for the org).
    requestLog: createRequestLogQuery(database.db, { includeContents: true }),
  });
  registerSystemRoutes(server, {
    readinessChecks: {
      database: database.ping,
      ...(redis ? { redis: async () => (await redis.ping()) === 'PONG' } : {}),
    },
    isShuttingDown: () => shuttingDown,
  });

  const metrics = createGatewayMetrics({
    recorder,
    circuits: async () =>
      (await router.health()).map((health) => ({ deploymentId: health.deploymentId, provider: health.provider, state: health.circuit })),
  });
  registerMetricsRoute(server, { auth: managementAuth, metrics });
  const metricsListener = config.metricsListen ? await startMetricsListener(config.metricsListen, metrics) : undefined;

  const bootstrap = await bootstrapFirstStart({
    db: database.db,
    store: tenancy,
    issuer,
    generatedMasterKey: master.generated,
    tier: config.bootstrapTier,
    apiKey: config.bootstrapApiKey,
    // The first org starts with a little credit so `npm start` works at once; later orgs are topped up by an admin.
    onOrgCreated: async (orgId) => void (await metering.credits.topUp(orgId, parseUsdNanos(config.bootstrapCreditUsd), 'first-start credit', 'grant')),
  });

  const lastUsedTimer = setInterval(() => {
    keys.flushLastUsed().catch((error) => logger.warn({ err: error }, 'last-used update failed'));
  }, 5000);
  lastUsedTimer.unref();

  const services: GatewayServices = { config, database, redis, tenancy, keys, issuer, changes, events, catalog, router, recorder, logRetention, metering, alerting, providers };

  return {
    server,
    services,
    bootstrap,
    inflight: () => inflightCount,
    async close() {
      shuttingDown = true;
      const deadline = Date.now() + config.shutdownGraceMs;
      const closing = server.close();
      // node:http closes its idle keep-alive connections as it stops listening; these are the edge's.
      httpEdge?.closeIdleConnections();
      while (inflightCount > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now())))]);
      clearInterval(lastUsedTimer);
      // Before the stores close: a refund under way finishes, and the lease goes to the next instance at once.
      await videoRunner.stop();
      await logRetention.stop();
      metrics.stop();
      metricsListener?.close();
      await keys.flushLastUsed().catch(() => {});
      // In parallel: with the database away each writer retries for a while, and those waits must not add up.
      await Promise.all([recorder.close(), guardrails.close(), experiments.close(), metering.close()]);
      await alerting.close();
      await keys.close();
      await changes.close();
      await upstream.close();
      await tracing.shutdown().catch(() => {});
      await Promise.all([circuitStore.flush?.(), healthStore.flush?.()]).catch(() => {});
      // Settlements may still sit in the connection's unhurried window (lib/redis-turn-writes.ts):
      // a PING is sent at once, takes them along, and answers only after Redis has run them all.
      await redis?.ping().catch(() => {});
      redis?.disconnect();
      if (cacheRedis !== redis) cacheRedis?.disconnect();
      redisSubscriber?.disconnect();
      await database.close();
    },
  };
}
