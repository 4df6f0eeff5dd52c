import type { GuardedHttpClient } from '../lib/guarded-http-client.js';
import type { Notifier, NotificationPayload } from './channel-types.js';
import { formatDetailValue } from './format-detail-value.js';
import { postForDelivery } from './http-delivery-result.js';

/** Slack allows at most 10 fields per section block and 150 characters in a header. */
const MAX_FIELDS = 10;
const MAX_HEADER_LENGTH = 150;

/** Slack mrkdwn treats &, < and > as control characters (https://api.slack.com/reference/surfaces/formatting#escaping). */
function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Pure: an incoming-webhook message (https://api.slack.com/messaging/webhooks): `text` is the
 * notification fallback, `blocks` show the title, severity, message and details.
 */
export function buildSlackMessage(payload: NotificationPayload): Record<string, unknown> {
  const blocks: Record<string, unknown>[] = [
    { type: 'header', text: { type: 'plain_text', text: payload.title.slice(0, MAX_HEADER_LENGTH), emoji: false } },
    { type: 'section', text: { type: 'mrkdwn', text: `*Severity:* ${payload.severity}\n${escapeMrkdwn(payload.message)}` } },
  ];
  const entries = Object.entries(payload.details);
  if (entries.length > 0) {
    blocks.push({
      type: 'section',
      fields: entries.slice(0, MAX_FIELDS).map(([key, value]) => ({ type: 'mrkdwn', text: `*${escapeMrkdwn(key)}*\n${escapeMrkdwn(formatDetailValue(value))}` })),
    });
  }
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `service: ${payload.service}` }] });
  return { text: `${payload.title} (${payload.severity})`, blocks };
}

export function createSlackNotifier(http: GuardedHttpClient): Notifier {
  return {
    async send(channel, payload) {
      if (channel.type !== 'slack') throw new Error(`slack notifier got a ${channel.type} channel`);
      return postForDelivery(http, channel.config.webhook_url, JSON.stringify(buildSlackMessage(payload)), {});
    },
  };
}
