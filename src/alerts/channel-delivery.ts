import type { GatewayEventKind } from '../lib/event-bus.js';
import type { AlertLogger } from './alert-logger.js';
import type { AlertChannel, DeliveryResult, Notifiers, NotificationPayload } from './channel-types.js';
import type { DeliveryLog } from './delivery-log.js';

export interface ChannelDelivery {
  /** Sends once (no retry, SPEC "Events" rule 5), records the attempt in the channel's log, and never throws. */
  deliver(channel: AlertChannel, payload: NotificationPayload, options: { eventKind: GatewayEventKind | 'test' }): Promise<DeliveryResult>;
}

export interface ChannelDeliveryOptions {
  notifiers: Notifiers;
  deliveryLog: DeliveryLog;
  logger: AlertLogger;
  now?: () => number;
}

export function createChannelDelivery({ notifiers, deliveryLog, logger, now = Date.now }: ChannelDeliveryOptions): ChannelDelivery {
  return {
    async deliver(channel, payload, { eventKind }) {
      const attemptedAt = now();
      let result: DeliveryResult;
      try {
        result = await notifiers[channel.type].send(channel, payload);
      } catch (error) {
        result = { delivered: false, status: null, error: error instanceof Error ? error.message : String(error), latencyMs: 0 };
      }
      const context = { channelId: channel.id, orgId: channel.orgId, channelType: channel.type, eventKind, status: result.status, latencyMs: result.latencyMs };
      if (result.delivered) logger.info(context, 'alert delivered');
      else logger.warn({ ...context, reason: result.error }, 'alert delivery failed; event dropped');
      try {
        await deliveryLog.record({
          channelId: channel.id,
          orgId: channel.orgId,
          eventKind,
          severity: payload.severity,
          delivered: result.delivered,
          httpStatus: result.status,
          latencyMs: result.latencyMs,
          error: result.error,
          test: eventKind === 'test',
          createdAt: attemptedAt,
        });
      } catch (error) {
        logger.error({ err: error, channelId: channel.id }, 'could not write the alert delivery log');
      }
      return result;
    },
  };
}
