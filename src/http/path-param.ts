import { GatewayError } from '../errors/gateway-error.js';

/**
 * A path parameter as Fastify decoded it (once: decoding again would turn "%25zz" into a URIError).
 * An empty one (`DELETE /api/admin/keys/`) is a 400 naming `param`, never a lookup of ''.
 */
export function pathParam(params: unknown, name: string, param = name): string {
  const value = typeof params === 'object' && params !== null ? (params as Record<string, unknown>)[name] : undefined;
  if (typeof value !== 'string' || value === '') throw new GatewayError('invalid_request', `Missing required parameter: '${param}'.`, { param });
  return value;
}
