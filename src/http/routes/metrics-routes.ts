import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.js';
import type { GatewayMetrics } from '../../observability/gateway-metrics.js';
import type { ManagementAuth } from '../management-auth.js';

/** GET /metrics on the main port, for the master credential only. */
export function registerMetricsRoute(app: FastifyInstance, dependencies: { auth: ManagementAuth; metrics: GatewayMetrics }): void {
  app.get('/metrics', { schema: { tags: ['System'], security: [{ bearerAuth: [] }] } }, async (request, reply) => {
    const principal = await dependencies.auth.requireAdmin(request);
    if (principal.scope !== 'master') throw new GatewayError('permission_denied', 'Metrics need the master credential.');
    reply.header('content-type', dependencies.metrics.registry.contentType);
    return dependencies.metrics.render();
  });
}

/**
 * GW_METRICS_LISTEN: a separate bind address (e.g. 127.0.0.1:9464) that serves /metrics without
 * credentials, for a scraper on a private network.
 */
export async function startMetricsListener(listen: string, metrics: GatewayMetrics): Promise<Server> {
  const separator = listen.lastIndexOf(':');
  const host = listen.slice(0, separator) || '127.0.0.1';
  const port = Number(listen.slice(separator + 1));
  const server = createServer((request, response) => {
    if (request.url !== '/metrics') {
      response.writeHead(404).end();
      return;
    }
    metrics.render().then(
      (text) => response.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      () => response.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return server;
}
