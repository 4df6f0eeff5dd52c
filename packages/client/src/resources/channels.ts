import type { OpenAI } from 'openai';
import { APIResource } from 'openai/core/resource';
import { rootUrl } from '../gateway-root.js';
import { withMetaMethod, type GwAPIPromise } from '../with-meta.js';

export type AlertChannelType = 'email' | 'slack' | 'teams' | 'jira' | 'webhook';

/** The alert channel creation body (SPEC "Alert channel"). */
export interface AlertChannelCreateParams {
  name: string;
  channel_type: AlertChannelType;
  /** Type-specific settings, e.g. `{ url, secret, headers }` for a webhook (HTTPS, public address). */
  config: Record<string, unknown>;
  is_active?: boolean;
  /** Event kinds to receive; budget.threshold when absent. */
  events?: string[];
}

/** A stored alert channel; secrets in `config` come back masked. */
export interface AlertChannel {
  id: string;
  object: 'alert_channel';
  name: string;
  channel_type: AlertChannelType;
  config: Record<string, unknown>;
  is_active: boolean;
  events: string[];
  created_at: number;
  updated_at: number;
}

/** The outcome of a test delivery. */
export interface AlertChannelTestResult {
  delivered: boolean;
  status?: number | null;
  error?: string | null;
  latency_ms?: number | null;
}

/** Alert channels: /gw/channels (outside /v1). */
export class Channels extends APIResource {
  /** POST /gw/channels. */
  create(body: AlertChannelCreateParams, options?: OpenAI.RequestOptions): GwAPIPromise<AlertChannel> {
    return withMetaMethod(this._client.post<AlertChannel>(rootUrl(this._client.baseURL, '/gw/channels'), { body, ...options }));
  }

  /** POST /gw/channels/{id}/test, without a body: sends a test notification through the stored configuration. */
  test(channelId: string, options?: OpenAI.RequestOptions): GwAPIPromise<AlertChannelTestResult> {
    const path = `/gw/channels/${encodeURIComponent(channelId)}/test`;
    return withMetaMethod(this._client.post<AlertChannelTestResult>(rootUrl(this._client.baseURL, path), options));
  }
}
