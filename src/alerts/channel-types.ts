import { z } from 'zod';
import { EVENT_KINDS, type GatewayEventKind, type Severity } from '../lib/event-bus.js';

/** SPEC "Alert channel (creation body)": channel_type is one of these five. */
export const CHANNEL_TYPES = ['webhook', 'email', 'slack', 'teams', 'jira'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

/** A channel subscribes to budget thresholds only unless it names other kinds (issue 6). */
export const DEFAULT_CHANNEL_EVENTS: readonly GatewayEventKind[] = ['budget.threshold'];

const httpsUrl = z
  .string()
  .trim()
  .min(1)
  .max(2048)
  .refine((value) => URL.canParse(value), 'must be a valid URL')
  .refine((value) => !URL.canParse(value) || new URL(value).protocol === 'https:', 'must be an https:// URL (http is not allowed)');

/** RFC 9110 §5.1 field-name: a token (tchar only). */
const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/, "header names must be HTTP tokens (letters, digits and !#$%&'*+-.^_`|~)");
/**
 * RFC 9110 §5.5 field-value, limited to visible ASCII, space and tab. undici refuses anything outside
 * tab, 0x20-0x7E and 0x80-0xFF at send time, so such a value would fail every delivery. obs-text
 * (0x80-0xFF) is refused too: undici writes it as Latin-1 bytes, so "é" would reach the receiver as
 * byte 0xE9 rather than its UTF-8 form, and RFC 9110 asks senders not to generate it.
 */
const headerValue = z
  .string()
  .max(4096)
  .regex(/^[\t\x20-\x7e]*$/, 'header values may contain only visible ASCII characters, spaces and tabs (encode other text, e.g. percent-encoding)');

export const webhookConfigSchema = z.strictObject({
  url: httpsUrl,
  secret: z.string().min(1).max(512).optional(),
  headers: z.record(headerName, headerValue).optional(),
});

export const emailConfigSchema = z.strictObject({
  to: z
    .union([z.email(), z.array(z.email()).min(1).max(50)])
    .transform((value) => (Array.isArray(value) ? value : [value])),
});

export const slackConfigSchema = z.strictObject({ webhook_url: httpsUrl });
export const teamsConfigSchema = z.strictObject({ webhook_url: httpsUrl });

export const jiraConfigSchema = z.strictObject({
  site_url: httpsUrl,
  project_key: z.string().trim().regex(/^[A-Za-z][A-Za-z0-9_]{0,31}$/, 'must be a Jira project key such as OPS'),
  issue_type: z.string().trim().min(1).max(64).default('Task'),
  email: z.email(),
  api_token: z.string().min(1).max(1024),
});

export type WebhookConfig = z.infer<typeof webhookConfigSchema>;
export type EmailConfig = z.infer<typeof emailConfigSchema>;
export type SlackConfig = z.infer<typeof slackConfigSchema>;
export type TeamsConfig = z.infer<typeof teamsConfigSchema>;
export type JiraConfig = z.infer<typeof jiraConfigSchema>;

export const CHANNEL_CONFIG_SCHEMAS = {
  webhook: webhookConfigSchema,
  email: emailConfigSchema,
  slack: slackConfigSchema,
  teams: teamsConfigSchema,
  jira: jiraConfigSchema,
} as const;

/** Config fields encrypted at rest and masked in every response (webhook header values are all secret). */
export const SECRET_FIELDS: Record<ChannelType, readonly string[]> = {
  webhook: ['secret', 'headers'],
  email: [],
  slack: ['webhook_url'],
  teams: ['webhook_url'],
  jira: ['api_token'],
};

/** Config fields that are URLs the gateway will POST to, checked by the SSRF guard. */
export const URL_FIELDS: Record<ChannelType, readonly string[]> = {
  webhook: ['url'],
  email: [],
  slack: ['webhook_url'],
  teams: ['webhook_url'],
  jira: ['site_url'],
};

export const eventKindSchema = z.enum(EVENT_KINDS);

interface ChannelBase {
  id: string;
  orgId: string;
  name: string;
  isActive: boolean;
  events: GatewayEventKind[];
  createdAt: number;
  updatedAt: number;
}

/** A channel with its full, decrypted configuration (never sent to clients as is). */
export type AlertChannel = ChannelBase &
  (
    | { type: 'webhook'; config: WebhookConfig }
    | { type: 'email'; config: EmailConfig }
    | { type: 'slack'; config: SlackConfig }
    | { type: 'teams'; config: TeamsConfig }
    | { type: 'jira'; config: JiraConfig }
  );

export type ChannelConfig = AlertChannel['config'];

export interface NewAlertChannel {
  orgId: string;
  name: string;
  type: ChannelType;
  config: ChannelConfig;
  isActive: boolean;
  events: GatewayEventKind[];
}

export interface AlertChannelPatch {
  name?: string;
  config?: ChannelConfig;
  isActive?: boolean;
  events?: GatewayEventKind[];
}

/** SPEC "Notification payload (sent to webhook channels)"; every channel type renders this one shape. */
export interface NotificationPayload {
  title: string;
  message: string;
  severity: Severity;
  details: Record<string, unknown>;
  service: 'gw-backend';
}

/** What one delivery attempt produced; `status` is the receiver's HTTP status when there was one. */
export interface DeliveryResult {
  delivered: boolean;
  status: number | null;
  error: string | null;
  latencyMs: number;
}

export interface Notifier {
  send(channel: AlertChannel, payload: NotificationPayload): Promise<DeliveryResult>;
}

export type Notifiers = Record<ChannelType, Notifier>;
