import type { GatewayEvent } from '../lib/event-bus.js';
import type { AlertChannel, NotificationPayload } from './channel-types.js';

/** SPEC "Notification payload": the service name, in brackets, prefixes every title. */
export const SERVICE_NAME = 'gw-backend';
const TITLE_PREFIX = '[gw]';

function prefixed(title: string): string {
  return title.startsWith(TITLE_PREFIX) ? title : `${TITLE_PREFIX} ${title}`;
}

/** The payload every channel type renders for an operational event. */
export function buildNotificationPayload(event: GatewayEvent): NotificationPayload {
  const details: Record<string, unknown> = { ...event.details };
  if (event.orgId !== null && details.org_id === undefined) details.org_id = event.orgId;
  if (details.event === undefined) details.event = event.kind;
  return { title: prefixed(event.title), message: event.message, severity: event.severity, details, service: SERVICE_NAME };
}

/** SPEC "Events", rule 8: the test call carries severity INFO and details.test = true. */
export function buildTestPayload(channel: AlertChannel, now: number): NotificationPayload {
  return {
    title: prefixed('Test notification'),
    message: `Test notification for alert channel "${channel.name}". If you can read this, the channel is configured correctly.`,
    severity: 'INFO',
    details: {
      test: true,
      org_id: channel.orgId,
      channel_id: channel.id,
      channel_name: channel.name,
      channel_type: channel.type,
      sent_at: new Date(now).toISOString(),
    },
    service: SERVICE_NAME,
  };
}
