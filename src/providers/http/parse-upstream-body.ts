import type { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';

/**
 * Validates an upstream body loosely (STYLE.md convention 6). A body that does not fit becomes a 502
 * `upstream_bad_response` naming the provider; the zod issues stay in `cause`, logged and never sent.
 */
export function parseUpstreamBody<Schema extends z.ZodType>(schema: Schema, body: unknown, provider: string, message: string): z.infer<Schema> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new GatewayError('upstream_bad_response', message, { provider, cause: parsed.error });
  return parsed.data;
}
