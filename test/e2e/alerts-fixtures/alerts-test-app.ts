import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type AlertLogger, silentAlertLogger } from '../../../src/alerts/alert-logger.js';
import { type Alerting, createAlerting } from '../../../src/alerts/create-alerting.js';
import { createDatabase, type DatabaseHandle } from '../../../src/db/create-database.js';
import { migrateToLatest } from '../../../src/db/migrate.js';
import { GatewayError } from '../../../src/errors/gateway-error.js';
import { buildServer } from '../../../src/http/build-server.js';
import type { AdminPrincipal, ManagementAuth } from '../../../src/http/management-auth.js';
import { registerChannelRoutes } from '../../../src/http/routes/channel-routes.js';
import { createEventBus, type EventBus } from '../../../src/lib/event-bus.js';
import type { HostLookup } from '../../../src/lib/ssrf-guard.js';
import { createSecretBox } from '../../../src/lib/secret-box.js';
import type { AuthContext } from '../../../src/tenancy/tenancy-types.js';

export interface AlertsTestApp {
  app: FastifyInstance;
  alerting: Alerting;
  eventBus: EventBus;
  database: DatabaseHandle;
  /** Bearer keys of two orgs (org ids `orgA`/`orgB` made unique per app). */
  keys: { a: string; b: string };
  orgs: { a: string; b: string };
  masterKey: string;
  /** app.inject with the bearer key of org A (or the key given). */
  call(method: string, url: string, body?: unknown, key?: string): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export interface AlertsTestAppOptions {
  databaseUrl: string;
  allowedHosts?: string[];
  caFile?: string;
  smtpUrl?: string;
  deliveryTimeoutMs?: number;
  lookup?: HostLookup;
  /** Receives the alerts feature's log lines (silent by default). */
  logger?: AlertLogger;
}

/**
 * The channel routes on the gateway's real HTTP conventions (buildServer: parsers, error handler),
 * with a fake bearer-key check standing in for key authentication.
 */
export async function startAlertsTestApp(options: AlertsTestAppOptions): Promise<AlertsTestApp> {
  const suffix = randomBytes(4).toString('hex');
  const orgs = { a: `org-a-${suffix}`, b: `org-b-${suffix}` };
  const keys = { a: `key-a-${suffix}`, b: `key-b-${suffix}` };
  const masterKey = `master-${suffix}`;
  const tokenOf = (request: FastifyRequest) => (request.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
  const auth: ManagementAuth = {
    async requireKey(request) {
      const token = tokenOf(request);
      const orgId = token === keys.a ? orgs.a : token === keys.b ? orgs.b : undefined;
      if (!orgId) throw new GatewayError('invalid_api_key', 'Invalid API key.');
      return { org: { id: orgId }, key: { id: `key-${orgId}`, orgId }, team: null } as unknown as AuthContext;
    },
    async requireAdmin(request): Promise<AdminPrincipal> {
      const token = tokenOf(request);
      if (token === masterKey) return { scope: 'master' };
      if (token === keys.a) return { scope: 'org', orgId: orgs.a, keyId: `key-${orgs.a}` };
      throw new GatewayError('invalid_api_key', 'Invalid admin credential.');
    },
  };

  const database = await createDatabase(options.databaseUrl);
  await migrateToLatest(database.db);
  const eventBus = createEventBus();
  const alerting = createAlerting({
    db: database.db,
    secretBox: createSecretBox(randomBytes(32)),
    eventBus,
    logger: options.logger ?? silentAlertLogger,
    config: { smtpUrl: options.smtpUrl, smtpFrom: 'gw alerts <alerts@gw.test>', webhookAllowedHosts: options.allowedHosts ?? [], webhookCaFile: options.caFile },
    deliveryTimeoutMs: options.deliveryTimeoutMs,
    lookup: options.lookup,
  });
  alerting.dispatcher.start();
  const app = await buildServer({ bodyLimitBytes: 1024 * 1024, fileLimitBytes: 1024 * 1024, logLevel: 'silent', version: 'test' });
  registerChannelRoutes(app, {
    auth,
    channels: alerting.channels,
    alertRoutes: alerting.alertRoutes,
    deliveryLog: alerting.deliveryLog,
    delivery: alerting.delivery,
    urlGuard: alerting.http.guard,
  });
  await app.ready();

  return {
    app,
    alerting,
    eventBus,
    database,
    keys,
    orgs,
    masterKey,
    async call(method, url, body, key = keys.a) {
      const response = await app.inject({
        method: method as 'GET',
        url,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        payload: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.statusCode, body: response.body ? JSON.parse(response.body) : undefined };
    },
    async close() {
      await app.close();
      await alerting.close();
      await database.close();
    },
  };
}
