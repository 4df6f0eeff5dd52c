import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { EventBus } from '../lib/event-bus.js';
import { createGuardedHttpClient, DEFAULT_DELIVERY_TIMEOUT_MS, type GuardedHttpClient } from '../lib/guarded-http-client.js';
import type { HostLookup } from '../lib/ssrf-guard.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { AlertLogger } from './alert-logger.js';
import { type AlertDispatcher, createAlertDispatcher } from './alert-dispatcher.js';
import { type AlertRouteStore, createSqlAlertRouteStore } from './alert-route-store.js';
import { type ChannelDelivery, createChannelDelivery } from './channel-delivery.js';
import { type ChannelStore, createSqlChannelStore } from './channel-store.js';
import type { Notifiers } from './channel-types.js';
import { createNotifiers } from './create-notifiers.js';
import { createSqlDeliveryLog, type DeliveryLog } from './delivery-log.js';

export interface AlertingOptions {
  db: Kysely<Database>;
  secretBox: SecretBox;
  eventBus: EventBus;
  logger: AlertLogger;
  /** Server config slice: SMTP for email channels and the webhook test mode (both off by default). */
  config: {
    smtpUrl?: string;
    smtpFrom: string;
    webhookAllowedHosts: readonly string[];
    webhookCaFile?: string;
  };
  /** Tests shorten the SPEC's 10 s receiver deadline; production leaves it. */
  deliveryTimeoutMs?: number;
  lookup?: HostLookup;
  /** Tests may replace the notifiers (the HTTP client is still built for URL checks). */
  notifiers?: Notifiers;
}

export interface Alerting {
  channels: ChannelStore;
  alertRoutes: AlertRouteStore;
  deliveryLog: DeliveryLog;
  delivery: ChannelDelivery;
  dispatcher: AlertDispatcher;
  http: GuardedHttpClient;
  /** Stops listening for events, waits for deliveries in flight, closes connections. */
  close(): Promise<void>;
}

/** Everything the alerts feature needs, wired; app.ts calls this once, starts the dispatcher and registers channel-routes. */
export function createAlerting(options: AlertingOptions): Alerting {
  const timeoutMs = options.deliveryTimeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS;
  const http = createGuardedHttpClient({
    allowedHosts: options.config.webhookAllowedHosts,
    caFile: options.config.webhookCaFile,
    timeoutMs,
    lookup: options.lookup,
  });
  const channels = createSqlChannelStore({ db: options.db, secretBox: options.secretBox });
  const alertRoutes = createSqlAlertRouteStore(options.db);
  const deliveryLog = createSqlDeliveryLog(options.db);
  const notifiers = options.notifiers ?? createNotifiers({ http, email: { smtpUrl: options.config.smtpUrl, from: options.config.smtpFrom, timeoutMs } });
  const delivery = createChannelDelivery({ notifiers, deliveryLog, logger: options.logger });
  const dispatcher = createAlertDispatcher({ store: channels, routes: alertRoutes, delivery, eventBus: options.eventBus, logger: options.logger });
  return {
    channels,
    alertRoutes,
    deliveryLog,
    delivery,
    dispatcher,
    http,
    async close() {
      dispatcher.stop();
      await dispatcher.idle();
      await http.close();
    },
  };
}
