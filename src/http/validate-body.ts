import type { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.js';
import { isAbsentAt } from '../lib/is-absent-at.js';

/**
 * Validates with zod and turns the first problem into one clear 400 naming the field: "Missing
 * required parameter" exactly when nothing was sent there, "Invalid value" when something wrong was.
 */
export function validateBody<Schema extends z.ZodType>(schema: Schema, body: unknown): z.infer<Schema> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue.path.map(String).join('.');
  const message = isAbsentAt(body, issue.path)
    ? `Missing required parameter: '${path}'.`
    : `Invalid value for '${path || 'body'}': ${issue.message}.`;
  throw new GatewayError('invalid_request', message, { param: path || undefined });
}
