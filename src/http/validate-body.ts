import type { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.js';

/** Validates with zod and turns the first problem into one clear 400 naming the field. */
export function validateBody<Schema extends z.ZodType>(schema: Schema, body: unknown): z.infer<Schema> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue.path.map(String).join('.');
  // zod leaves `issue.input` out unless asked to report inputs, so the body itself says whether the field was sent.
  const missing = issue.code === 'invalid_type' && valueAt(body, issue.path) === undefined;
  const message = missing
    ? `Missing required parameter: '${path}'.`
    : `Invalid value for '${path || 'body'}': ${issue.message}.`;
  throw new GatewayError('invalid_request', message, { param: path || undefined });
}

function valueAt(body: object, path: readonly PropertyKey[]): unknown {
  let value: unknown = body;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
