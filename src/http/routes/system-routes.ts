import type { FastifyInstance } from 'fastify';

export interface SystemRoutesDependencies {
  /** Each named dependency reports whether it is reachable (database, redis). */
  readinessChecks: Record<string, () => Promise<boolean>>;
  isShuttingDown(): boolean;
}

/** Liveness and readiness for load balancers and orchestrators. */
export function registerSystemRoutes(app: FastifyInstance, dependencies: SystemRoutesDependencies): void {
  app.get('/healthz', { schema: { tags: ['System'] } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { tags: ['System'] } }, async (_request, reply) => {
    const checks: Record<string, boolean> = {};
    await Promise.all(
      Object.entries(dependencies.readinessChecks).map(async ([name, check]) => {
        checks[name] = await check().catch(() => false);
      }),
    );
    const ready = !dependencies.isShuttingDown() && Object.values(checks).every(Boolean);
    reply.code(ready ? 200 : 503);
    return { status: ready ? 'ready' : 'not_ready', shutting_down: dependencies.isShuttingDown(), checks };
  });
}
