import { createHmac } from 'node:crypto';
import { canonicalJson } from '../lib/canonical-json.js';
import type { GuardedHttpClient } from '../lib/guarded-http-client.js';
import type { Notifier, NotificationPayload, WebhookConfig } from './channel-types.js';
import { postForDelivery } from './http-delivery-result.js';

export const SIGNATURE_HEADER = 'x-gw-signature';

/**
 * Headers a channel's config.headers may not set: the body's type and signature (SPEC "Events",
 * rule 7 sends custom headers, but they cannot change what is signed or how), and framing headers
 * that would corrupt the request.
 */
const RESERVED_HEADERS = new Set(['content-type', SIGNATURE_HEADER, 'content-length', 'host', 'transfer-encoding', 'connection', 'expect', 'upgrade', 'te', 'trailer', 'keep-alive']);

export interface SignedWebhookRequest {
  body: string;
  headers: Record<string, string>;
}

/** Pure: the exact bytes and headers of a webhook delivery (SPEC "Events", rules 1, 6 and 7). */
export function buildWebhookRequest(config: WebhookConfig, payload: NotificationPayload): SignedWebhookRequest {
  // Canonical JSON is ASCII-only (non-ASCII is \u-escaped), so these characters are the bytes sent and signed.
  const body = canonicalJson(payload);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.headers ?? {})) {
    if (!RESERVED_HEADERS.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
  }
  headers['content-type'] = 'application/json';
  if (config.secret) headers[SIGNATURE_HEADER] = `sha256=${createHmac('sha256', config.secret).update(body, 'utf8').digest('hex')}`;
  return { body, headers };
}

export function createWebhookNotifier(http: GuardedHttpClient): Notifier {
  return {
    async send(channel, payload) {
      if (channel.type !== 'webhook') throw new Error(`webhook notifier got a ${channel.type} channel`);
      const { body, headers } = buildWebhookRequest(channel.config, payload);
      return postForDelivery(http, channel.config.url, body, headers);
    },
  };
}
