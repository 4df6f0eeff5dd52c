import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AlertRouteStore } from '../../alerts/alert-route-store.js';
import type { ChannelDelivery } from '../../alerts/channel-delivery.js';
import { toChannelRecord, toDeliveryRecord } from '../../alerts/channel-record.js';
import type { ChannelStore } from '../../alerts/channel-store.js';
import { eventKindSchema } from '../../alerts/channel-types.js';
import type { DeliveryLog } from '../../alerts/delivery-log.js';
import { buildTestPayload } from '../../alerts/notification-payload.js';
import {
  assertPublicDestinations,
  createChannelBodySchema,
  eventsOrDefault,
  parseChannelConfig,
  toChannelPatch,
  updateChannelBodySchema,
} from '../../alerts/parse-channel-input.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { SsrfGuard } from '../../lib/ssrf-guard.js';
import type { ManagementAuth } from '../management-auth.js';
import { limitQuery, parseQuery } from '../parse-query.js';
import { createAdminOrgResolver, orgIdQuery } from '../resolve-admin-org.js';
import { validateBody } from '../validate-body.js';

export interface ChannelRouteDependencies {
  auth: ManagementAuth;
  channels: ChannelStore;
  alertRoutes: AlertRouteStore;
  deliveryLog: DeliveryLog;
  delivery: ChannelDelivery;
  /** The same guard deliveries use (config.webhookAllowedHosts applies to both). */
  urlGuard: Pick<SsrfGuard, 'checkUrl'>;
  /** When given, an admin naming an unknown org gets 404 instead of an empty answer. */
  orgExists?(orgId: string): Promise<boolean>;
  now?: () => number;
}

/** Bounds an org's fan-out: every event reaches at most this many channels. */
export const MAX_CHANNELS_PER_ORG = 100;

const limitQuerySchema = limitQuery(500, 50);
const routeBodySchema = z.object({
  event_kind: eventKindSchema.default('budget.threshold'),
  /** A fraction (0.8) or a percentage (80) of the budget; null or absent = every threshold. */
  threshold: z.number().positive().max(1000).nullable().optional(),
  channel_ids: z.array(z.string().min(1)).max(MAX_CHANNELS_PER_ORG),
  org_id: z.string().min(1).optional(),
});

type IdParams = { Params: { id: string } };

function notFound(id: string): GatewayError {
  return new GatewayError('not_found', `No alert channel with id '${id}' in this organization.`, { param: 'channel_id' });
}

/**
 * Alert channels (SPEC "Alert channel", issue 6): create/list/get/update/delete under the org's bearer
 * key, a test call, the per-channel delivery log, and destinations per threshold (alert routes), the
 * latter also under /api/admin for the master credential or an org-admin key.
 */
export function registerChannelRoutes(app: FastifyInstance, dependencies: ChannelRouteDependencies): void {
  const { auth, channels, alertRoutes, deliveryLog, delivery, urlGuard, now = Date.now } = dependencies;
  const orgOf = async (request: FastifyRequest) => (await auth.requireKey(request)).org.id;

  async function routesResponse(orgId: string) {
    const routes = await alertRoutes.list(orgId);
    return {
      object: 'list',
      data: routes.map((route) => ({
        org_id: route.orgId,
        event_kind: route.eventKind,
        threshold: route.threshold,
        channel_ids: route.channelIds,
        updated_at: Math.floor(route.updatedAt / 1000),
      })),
    };
  }

  async function putRoute(orgId: string, input: z.infer<typeof routeBodySchema>) {
    const known = new Set((await channels.list(orgId)).map((channel) => channel.id));
    const unknown = input.channel_ids.find((id) => !known.has(id));
    if (unknown) throw new GatewayError('invalid_request', `Invalid value for 'channel_ids': no alert channel '${unknown}' in this organization.`, { param: 'channel_ids' });
    await alertRoutes.set({ orgId, eventKind: input.event_kind, threshold: input.threshold ?? null, channelIds: [...new Set(input.channel_ids)] });
    return routesResponse(orgId);
  }

  const adminOrg = createAdminOrgResolver(auth, dependencies.orgExists);

  // The test call has no body; clients that still send `Content-Type: application/json` with an empty
  // body must not get a 400, so this scope reads an empty JSON body as "no body".
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(/^application\/(.+\+)?json(\s*;.*)?$/i, { parseAs: 'string' }, (_request, text, done) => {
      if (text === '') return done(null, undefined);
      try {
        done(null, JSON.parse(text as string, (key, value) => (key === '__proto__' ? undefined : value)));
      } catch {
        done(new GatewayError('invalid_request', 'The request body is not valid JSON.'), undefined);
      }
    });

    scope.post('/gw/channels', { schema: { tags: ['Alerts'], summary: 'Create an alert channel', security: [{ bearerAuth: [] }] } }, async (request, reply) => {
      const orgId = await orgOf(request);
      const body = validateBody(createChannelBodySchema, request.body);
      const config = parseChannelConfig(body.channel_type, body.config);
      await assertPublicDestinations(urlGuard, body.channel_type, config);
      if ((await channels.list(orgId)).length >= MAX_CHANNELS_PER_ORG) {
        throw new GatewayError('invalid_request', `An organization may have at most ${MAX_CHANNELS_PER_ORG} alert channels.`);
      }
      const channel = await channels.create({ orgId, name: body.name, type: body.channel_type, config, isActive: body.is_active, events: eventsOrDefault(body.events) });
      return reply.code(200).send(toChannelRecord(channel));
    });

    scope.get('/gw/channels', { schema: { tags: ['Alerts'], summary: 'List alert channels', security: [{ bearerAuth: [] }] } }, async (request) => {
      const orgId = await orgOf(request);
      return { object: 'list', data: (await channels.list(orgId)).map(toChannelRecord) };
    });

    scope.get<IdParams>('/gw/channels/:id', { schema: { tags: ['Alerts'], summary: 'Get an alert channel', security: [{ bearerAuth: [] }] } }, async (request) => {
      const orgId = await orgOf(request);
      const channel = await channels.get(orgId, request.params.id);
      if (!channel) throw notFound(request.params.id);
      return toChannelRecord(channel);
    });

    scope.patch<IdParams>('/gw/channels/:id', { schema: { tags: ['Alerts'], summary: 'Update an alert channel', security: [{ bearerAuth: [] }] } }, async (request) => {
      const orgId = await orgOf(request);
      const body = validateBody(updateChannelBodySchema, request.body);
      const current = await channels.get(orgId, request.params.id);
      if (!current) throw notFound(request.params.id);
      const updated = await channels.update(orgId, current.id, await toChannelPatch(urlGuard, current, body));
      if (!updated) throw notFound(request.params.id);
      return toChannelRecord(updated);
    });

    scope.delete<IdParams>('/gw/channels/:id', { schema: { tags: ['Alerts'], summary: 'Delete an alert channel', security: [{ bearerAuth: [] }] } }, async (request) => {
      const orgId = await orgOf(request);
      if (!(await channels.delete(orgId, request.params.id))) throw notFound(request.params.id);
      return { id: request.params.id, object: 'alert_channel', deleted: true };
    });

    scope.post<IdParams>(
      '/gw/channels/:id/test',
      { schema: { tags: ['Alerts'], summary: "Send a test notification through the channel's stored configuration", security: [{ bearerAuth: [] }] } },
      async (request) => {
        const orgId = await orgOf(request);
        const channel = await channels.get(orgId, request.params.id);
        if (!channel) throw notFound(request.params.id);
        // The caller asked for this delivery, so it is awaited (bounded by the 10 s delivery timeout).
        const result = await delivery.deliver(channel, buildTestPayload(channel, now()), { eventKind: 'test' });
        return { delivered: result.delivered, status: result.status, error: result.error, latency_ms: result.latencyMs };
      },
    );

    scope.get<IdParams>(
      '/gw/channels/:id/deliveries',
      { schema: { tags: ['Alerts'], summary: 'Delivery log of an alert channel, newest first', security: [{ bearerAuth: [] }] } },
      async (request) => {
        const orgId = await orgOf(request);
        const { limit } = parseQuery(limitQuerySchema, request.query);
        if (!(await channels.get(orgId, request.params.id))) throw notFound(request.params.id);
        return { object: 'list', data: (await deliveryLog.list(orgId, request.params.id, limit)).map(toDeliveryRecord) };
      },
    );

    scope.get('/gw/alert-routes', { schema: { tags: ['Alerts'], summary: 'Destinations per event kind and budget threshold', security: [{ bearerAuth: [] }] } }, async (request) =>
      routesResponse(await orgOf(request)),
    );
    scope.put('/gw/alert-routes', { schema: { tags: ['Alerts'], summary: 'Choose the channels for an event kind or budget threshold', security: [{ bearerAuth: [] }] } }, async (request) => {
      const orgId = await orgOf(request);
      return putRoute(orgId, validateBody(routeBodySchema, request.body));
    });

    scope.get('/api/admin/alert-routes', { schema: { tags: ['Admin'], summary: 'Alert routes of an org' } }, async (request) =>
      routesResponse(await adminOrg.fromQuery(request)),
    );
    scope.put('/api/admin/alert-routes', { schema: { tags: ['Admin'], summary: 'Set an alert route of an org' } }, async (request) => {
      const principal = await auth.requireAdmin(request);
      const input = validateBody(routeBodySchema, request.body);
      return putRoute(await adminOrg.forPrincipal(principal, input.org_id), input);
    });
    scope.get<IdParams>('/api/admin/channels/:id/deliveries', { schema: { tags: ['Admin'], summary: 'Delivery log of an alert channel' } }, async (request) => {
      const principal = await auth.requireAdmin(request);
      const { org_id, limit } = parseQuery(orgIdQuery.extend(limitQuerySchema.shape), request.query);
      const orgId = await adminOrg.forPrincipal(principal, org_id);
      if (!(await channels.get(orgId, request.params.id))) throw notFound(request.params.id);
      return { object: 'list', data: (await deliveryLog.list(orgId, request.params.id, limit)).map(toDeliveryRecord) };
    });
  });
}
