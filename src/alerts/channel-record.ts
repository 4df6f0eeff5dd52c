import type { AlertChannel } from './channel-types.js';
import { SECRET_FIELDS } from './channel-types.js';
import type { DeliveryRecord } from './delivery-log.js';

/** Issue 6: a returned record never echoes a secret in full; at most its last 4 characters show. */
export function maskSecret(value: string): string {
  return value.length >= 12 ? `***${value.slice(-4)}` : '***';
}

/** The config as clients see it: secret fields masked (every webhook header value too). */
export function maskChannelConfig(channel: AlertChannel): Record<string, unknown> {
  const masked: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(channel.config as Record<string, unknown>)) {
    if (value === undefined) continue;
    if (!SECRET_FIELDS[channel.type].includes(field)) masked[field] = value;
    else if (typeof value === 'string') masked[field] = maskSecret(value);
    else if (typeof value === 'object' && value !== null) {
      masked[field] = Object.fromEntries(Object.entries(value as Record<string, string>).map(([name, secret]) => [name, maskSecret(String(secret))]));
    }
  }
  return masked;
}

export function toChannelRecord(channel: AlertChannel): Record<string, unknown> {
  return {
    id: channel.id,
    object: 'alert_channel',
    name: channel.name,
    channel_type: channel.type,
    config: maskChannelConfig(channel),
    is_active: channel.isActive,
    events: channel.events,
    created_at: Math.floor(channel.createdAt / 1000),
    updated_at: Math.floor(channel.updatedAt / 1000),
  };
}

export function toDeliveryRecord(record: DeliveryRecord): Record<string, unknown> {
  return {
    id: record.id,
    object: 'alert_delivery',
    channel_id: record.channelId,
    time: new Date(record.createdAt).toISOString(),
    created_at: Math.floor(record.createdAt / 1000),
    event_kind: record.eventKind,
    severity: record.severity,
    status: record.delivered ? 'delivered' : 'failed',
    http_status: record.httpStatus,
    latency_ms: record.latencyMs,
    error: record.error,
    test: record.test,
  };
}
