import { z } from 'zod';
import type { CallSignal } from '../lib/call-signal.js';

/**
 * Sends one JSON POST through the gateway's SSRF-guarded client (the one alert channels use:
 * HTTPS only, public addresses only, connecting to the checked address) and returns the status and
 * parsed body. Injected, so this folder does no network I/O of its own.
 */
export type GuardedPost = (
  url: string,
  body: unknown,
  options: { headers: Record<string, string>; timeoutMs: number; signal?: CallSignal },
) => Promise<{ status: number; body: unknown }>;

/** The answer a guardrail webhook gives: allow, block, or redact with replacement texts. */
export const webhookAnswerSchema = z.looseObject({
  action: z.enum(['allow', 'block', 'redact']),
  reason: z.string().max(500).optional(),
  texts: z.array(z.string()).optional(),
});

export type WebhookAnswer = z.infer<typeof webhookAnswerSchema>;

export interface WebhookRequest {
  guardrail: { id: string; name: string };
  stage: 'pre' | 'post';
  texts: string[];
}

/** Asks the webhook; any transport failure, non-2xx status or malformed answer throws. */
export async function askGuardrailWebhook(
  post: GuardedPost,
  config: { url: string; timeout_ms?: number; headers?: Record<string, string> },
  request: WebhookRequest,
  signal?: CallSignal,
): Promise<WebhookAnswer> {
  const response = await post(
    config.url,
    { ...request, input: request.texts.join('\n\n') },
    { headers: config.headers ?? {}, timeoutMs: config.timeout_ms ?? 5000, signal },
  );
  if (response.status < 200 || response.status >= 300) throw new Error(`guardrail webhook answered ${response.status}`);
  return webhookAnswerSchema.parse(response.body);
}

/** Adapts the shared SSRF-guarded client (lib/guarded-http-client.ts) to GuardedPost. */
export function guardedPostFrom(client: {
  postJson(url: string, body: string, headers?: Record<string, string>, options?: { timeoutMs?: number; signal?: CallSignal }): Promise<{ status: number; body: string }>;
}): GuardedPost {
  return async (url, body, options) => {
    const response = await client.postJson(url, JSON.stringify(body), options.headers, { timeoutMs: options.timeoutMs, signal: options.signal });
    let parsed: unknown;
    try {
      parsed = response.body === '' ? undefined : JSON.parse(response.body);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed };
  };
}
