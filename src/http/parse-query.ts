import { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.js';

/** Validates a query string with zod; the first problem becomes one 400 naming the parameter. */
export function parseQuery<Schema extends z.ZodType>(schema: Schema, query: unknown): z.infer<Schema> {
  const result = schema.safeParse(query ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue.path.map(String).join('.');
  throw new GatewayError('invalid_request', `Invalid value for '${path}': ${issue.message}.`, { param: path });
}

/** A `limit` query parameter: an integer from 1 to `max`, `fallback` when absent. */
export function limitQuery(max: number, fallback: number) {
  return z.object({ limit: z.coerce.number().int().min(1).max(max).default(fallback) });
}
