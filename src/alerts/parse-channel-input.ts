import { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.js';
import type { GatewayEventKind } from '../lib/event-bus.js';
import { isAbsentAt } from '../lib/is-absent-at.js';
import { SsrfBlockedError, type SsrfGuard } from '../lib/ssrf-guard.js';
import { maskSecret } from './channel-record.js';
import {
  type AlertChannel,
  type AlertChannelPatch,
  CHANNEL_CONFIG_SCHEMAS,
  CHANNEL_TYPES,
  type ChannelConfig,
  type ChannelType,
  DEFAULT_CHANNEL_EVENTS,
  eventKindSchema,
  SECRET_FIELDS,
  URL_FIELDS,
} from './channel-types.js';

const eventsSchema = z.array(eventKindSchema).max(20).transform((kinds) => [...new Set(kinds)]);

export const createChannelBodySchema = z.object({
  name: z.string().trim().min(1).max(200),
  channel_type: z.enum(CHANNEL_TYPES),
  config: z.record(z.string(), z.unknown()),
  is_active: z.boolean().default(true),
  events: eventsSchema.optional(),
});

export const updateChannelBodySchema = z.object({
  name: z.string().trim().min(1).max(200).optional(),
  channel_type: z.enum(CHANNEL_TYPES).optional(),
  /** Merged over the stored config; a masked secret sent back unchanged keeps the stored one; null removes a field. */
  config: z.record(z.string(), z.unknown()).optional(),
  is_active: z.boolean().optional(),
  events: eventsSchema.optional(),
});

export type CreateChannelBody = z.infer<typeof createChannelBodySchema>;
export type UpdateChannelBody = z.infer<typeof updateChannelBodySchema>;

function invalid(path: string, message: string): GatewayError {
  return new GatewayError('invalid_request', `Invalid value for '${path}': ${message}.`, { param: path });
}

/** Validates a config against its type's schema; errors name the field as `config.<field>`. */
export function parseChannelConfig(type: ChannelType, config: Record<string, unknown>): ChannelConfig {
  const result = CHANNEL_CONFIG_SCHEMAS[type].safeParse(config);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = ['config', ...issue.path.map(String)].join('.');
  if (issue.code === 'unrecognized_keys') throw invalid('config', `unknown field(s) for a ${type} channel: ${issue.keys.join(', ')}`);
  const missing = isAbsentAt(config, issue.path);
  // A bad record key (a header name) carries the reason in its nested issue; the outer one only says "Invalid key".
  const message = issue.code === 'invalid_key' ? (issue.issues[0]?.message ?? issue.message) : issue.message;
  throw missing
    ? new GatewayError('invalid_request', `Missing required parameter: '${path}' (required for a ${type} channel).`, { param: path })
    : invalid(path, message);
}

/** Issue 6: destination URLs must be HTTPS and resolve to public addresses, checked at creation and update. */
export async function assertPublicDestinations(guard: Pick<SsrfGuard, 'checkUrl'>, type: ChannelType, config: ChannelConfig): Promise<void> {
  for (const field of URL_FIELDS[type]) {
    const url = (config as Record<string, unknown>)[field];
    if (typeof url !== 'string') continue;
    try {
      await guard.checkUrl(url);
    } catch (error) {
      if (error instanceof SsrfBlockedError) throw invalid(`config.${field}`, error.message);
      throw error;
    }
  }
}

export function eventsOrDefault(events: GatewayEventKind[] | undefined): GatewayEventKind[] {
  return events ?? [...DEFAULT_CHANNEL_EVENTS];
}

/**
 * The config a PATCH asks for: fields merged over the stored ones, `null` removing a field, and a
 * secret sent back in its masked form (as GET returned it) keeping the stored secret.
 */
export function mergeChannelConfig(current: AlertChannel, patch: Record<string, unknown>): Record<string, unknown> {
  const stored = current.config as Record<string, unknown>;
  const merged: Record<string, unknown> = { ...stored };
  for (const [field, value] of Object.entries(patch)) {
    if (value === null) {
      delete merged[field];
      continue;
    }
    const secret = SECRET_FIELDS[current.type].includes(field);
    if (secret && typeof value === 'string' && typeof stored[field] === 'string' && value === maskSecret(stored[field] as string)) continue;
    if (secret && typeof value === 'object' && typeof stored[field] === 'object' && stored[field] !== null) {
      const storedHeaders = stored[field] as Record<string, string>;
      merged[field] = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([name, headerValue]) => [
          name,
          storedHeaders[name] !== undefined && headerValue === maskSecret(storedHeaders[name]) ? storedHeaders[name] : headerValue,
        ]),
      );
      continue;
    }
    merged[field] = value;
  }
  return merged;
}

/** Turns a validated PATCH body into a store patch (config validated and its URLs checked). */
export async function toChannelPatch(guard: Pick<SsrfGuard, 'checkUrl'>, current: AlertChannel, body: UpdateChannelBody): Promise<AlertChannelPatch> {
  if (body.channel_type !== undefined && body.channel_type !== current.type) {
    throw invalid('channel_type', 'the type of a channel cannot change; create a new channel instead');
  }
  const patch: AlertChannelPatch = { name: body.name, isActive: body.is_active, events: body.events };
  if (body.config !== undefined) {
    const config = parseChannelConfig(current.type, mergeChannelConfig(current, body.config));
    await assertPublicDestinations(guard, current.type, config);
    patch.config = config;
  }
  return patch;
}
