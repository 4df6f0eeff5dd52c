import type { GuardedHttpClient } from '../lib/guarded-http-client.js';
import type { Notifier, NotificationPayload } from './channel-types.js';
import { formatDetailValue } from './format-detail-value.js';
import { postForDelivery } from './http-delivery-result.js';

const SEVERITY_COLORS: Record<NotificationPayload['severity'], string> = {
  CRITICAL: 'Attention',
  HIGH: 'Attention',
  WARNING: 'Warning',
  INFO: 'Accent',
};

/**
 * Pure: a message carrying one Adaptive Card, the shape both Teams Workflows webhooks and the older
 * incoming-webhook connectors accept
 * (https://learn.microsoft.com/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using#send-adaptive-cards-using-an-incoming-webhook).
 */
export function buildTeamsMessage(payload: NotificationPayload): Record<string, unknown> {
  const facts = [
    { title: 'Severity', value: payload.severity },
    { title: 'Service', value: payload.service },
    ...Object.entries(payload.details).map(([key, value]) => ({ title: key, value: formatDetailValue(value) })),
  ];
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            { type: 'TextBlock', text: payload.title, weight: 'Bolder', size: 'Medium', wrap: true, color: SEVERITY_COLORS[payload.severity] },
            { type: 'TextBlock', text: payload.message, wrap: true },
            { type: 'FactSet', facts },
          ],
        },
      },
    ],
  };
}

export function createTeamsNotifier(http: GuardedHttpClient): Notifier {
  return {
    async send(channel, payload) {
      if (channel.type !== 'teams') throw new Error(`teams notifier got a ${channel.type} channel`);
      return postForDelivery(http, channel.config.webhook_url, JSON.stringify(buildTeamsMessage(payload)), {});
    },
  };
}
