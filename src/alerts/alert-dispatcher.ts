import type { EventBus, GatewayEvent } from '../lib/event-bus.js';
import type { AlertLogger } from './alert-logger.js';
import { type AlertRouteStore, normalizeThreshold } from './alert-route-store.js';
import type { ChannelDelivery } from './channel-delivery.js';
import type { ChannelStore } from './channel-store.js';
import type { AlertChannel } from './channel-types.js';
import { buildNotificationPayload } from './notification-payload.js';

export interface AlertDispatcherOptions {
  store: ChannelStore;
  routes: AlertRouteStore;
  delivery: ChannelDelivery;
  eventBus: EventBus;
  logger: AlertLogger;
  /** Events being delivered at once; past it new events are dropped (and logged) rather than queued without bound. */
  maxInFlight?: number;
}

export interface AlertDispatcher {
  start(): void;
  stop(): void;
  /** Resolves when every delivery started so far has finished (tests, graceful shutdown). */
  idle(): Promise<void>;
}

/**
 * Subscribes to operational events and fans each out to its channels, off the request path: the
 * bus calls listeners after the producing call's stack, and this listener only starts a promise.
 *
 * Which channels receive an event:
 * 1. `event.channelIds` when the producer chose them (destinations per threshold decided upstream);
 * 2. else the org's alert route for the event kind (for budget.threshold, the route of that exact
 *    threshold first, then the kind's catch-all route);
 * 3. else every active channel of the org subscribed to the kind.
 * Explicit destinations (1, 2) only need to be active, not subscribed. When none of them is an
 * existing, active channel (all deleted or deactivated), the event falls back to 3 and a warning is
 * logged, so a stale route never swallows an alert. An org-less event (a provider outage concerns
 * every tenant) goes to the subscribed channels of every org.
 */
export function createAlertDispatcher({ store, routes, delivery, eventBus, logger, maxInFlight = 256 }: AlertDispatcherOptions): AlertDispatcher {
  const inFlight = new Set<Promise<void>>();
  let unsubscribe: (() => void) | undefined;

  async function channelsFor(event: GatewayEvent): Promise<AlertChannel[]> {
    if (event.orgId === null) {
      const subscribed = await store.listSubscribed(event.kind, null);
      return event.channelIds?.length ? subscribed.filter((channel) => event.channelIds?.includes(channel.id)) : subscribed;
    }
    const threshold = event.kind === 'budget.threshold' ? normalizeThreshold(event.details.threshold) : null;
    const chosen = event.channelIds?.length ? event.channelIds : await routes.channelIdsFor(event.orgId, event.kind, threshold);
    if (!chosen) return store.listSubscribed(event.kind, event.orgId);
    const orgId = event.orgId;
    const found = await Promise.all([...new Set(chosen)].map((id) => store.get(orgId, id)));
    const active = found.filter((channel): channel is AlertChannel => channel !== undefined && channel.isActive);
    if (active.length > 0) return active;
    const subscribed = await store.listSubscribed(event.kind, orgId);
    logger.warn(
      { eventKind: event.kind, orgId, threshold, routedChannelIds: chosen, fallbackChannelIds: subscribed.map((channel) => channel.id) },
      subscribed.length > 0
        ? 'alert route names no existing active channel; sent to the subscribed channels instead'
        : 'alert route names no existing active channel and no channel is subscribed; event not delivered',
    );
    return subscribed;
  }

  async function dispatch(event: GatewayEvent): Promise<void> {
    const channels = await channelsFor(event);
    if (channels.length === 0) return;
    const payload = buildNotificationPayload(event);
    await Promise.all(channels.map((channel) => delivery.deliver(channel, payload, { eventKind: event.kind })));
  }

  function onEvent(event: GatewayEvent): void {
    if (inFlight.size >= maxInFlight) {
      logger.warn({ eventKind: event.kind, orgId: event.orgId }, 'alert backlog full; event dropped');
      return;
    }
    const task = dispatch(event)
      .catch((error: unknown) => logger.error({ err: error, eventKind: event.kind, orgId: event.orgId }, 'alert dispatch failed; event dropped'))
      .finally(() => inFlight.delete(task));
    inFlight.add(task);
  }

  return {
    start() {
      unsubscribe ??= eventBus.subscribe(onEvent);
    },
    stop() {
      unsubscribe?.();
      unsubscribe = undefined;
    },
    async idle() {
      // The bus delivers on a microtask; let it run before reading the in-flight set.
      await new Promise((resolve) => setImmediate(resolve));
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
