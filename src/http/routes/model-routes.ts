import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import type { KeyAuthenticator } from '../../keys/key-authenticator.js';
import type { ChangeFeed } from '../../lib/change-feed.js';
import type { ModelList, ModelObject } from '../../protocol/models.js';
import type { ModelCatalog } from '../../routing/model-catalog.js';
import { bearerToken } from '../bearer-token.js';
import { isModelVisible } from '../../tenancy/model-visibility.js';

export interface ModelRoutesDependencies {
  keys: KeyAuthenticator;
  catalog: ModelCatalog;
  changes: ChangeFeed;
  cacheTtlMs?: number;
}

/**
 * GET /v1/models and /v1/models/{id}: the caller's org catalog, ids without provider prefix. The
 * list is cached per org (x-gw-cache: hit|miss) and dropped when the catalog or the org changes.
 */
export function registerModelRoutes(app: FastifyInstance, dependencies: ModelRoutesDependencies): void {
  const ttlMs = dependencies.cacheTtlMs ?? 60_000;
  const cache = new Map<string, { list: ModelList; expiresAt: number }>();
  dependencies.changes.subscribe((notice) => {
    if (notice.kind === 'catalog' || notice.kind === 'all' || notice.kind === 'org' || notice.kind === 'team' || notice.kind === 'key') cache.clear();
  });

  const listFor = async (token: string | undefined): Promise<{ list: ModelList; hit: boolean }> => {
    const auth = await dependencies.keys.authenticate(token);
    const cacheKey = `${auth.org.id}:${auth.team?.id ?? ''}:${auth.key.id}`;
    const cached = cache.get(cacheKey);
    if (cached && cached.expiresAt > Date.now()) return { list: cached.list, hit: true };
    const data: ModelObject[] = dependencies.catalog
      .list()
      .filter((model) => isModelVisible(auth, model.id))
      .map((model) => {
        const entry: ModelObject & { description?: string } = {
          id: model.id,
          object: 'model',
          created: Math.floor(model.createdAt / 1000),
          owned_by: model.ownedBy,
        };
        if (model.description) entry.description = model.description;
        return entry;
      });
    const list: ModelList = { object: 'list', data };
    if (cache.size > 10_000) cache.clear();
    cache.set(cacheKey, { list, expiresAt: Date.now() + ttlMs });
    return { list, hit: false };
  };

  const schema = { tags: ['Models'], security: [{ bearerAuth: [] }] };
  app.get('/v1/models', { schema }, async (request, reply) => {
    const { list, hit } = await listFor(bearerToken(request));
    reply.header('x-gw-cache', hit ? 'hit' : 'miss');
    return list;
  });

  app.get('/v1/models/*', { schema }, async (request, reply) => {
    // Wildcard, because some ids contain "/" (e.g. "meta-llama/Llama-3.1-8B"). Fastify has decoded
    // it already: decoding again would misread an id containing "%" (and throw on "%" alone).
    const { '*': modelId } = z.object({ '*': z.string() }).parse(request.params);
    const { list, hit } = await listFor(bearerToken(request));
    const model = list.data.find((entry) => entry.id === modelId);
    if (!model) throw new GatewayError('model_not_found', `The model '${modelId}' does not exist.`, { param: 'model' });
    reply.header('x-gw-cache', hit ? 'hit' : 'miss');
    return model;
  });
}
