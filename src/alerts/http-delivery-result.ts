import { GuardedRequestError, type GuardedHttpClient } from '../lib/guarded-http-client.js';
import type { DeliveryResult } from './channel-types.js';

/**
 * POSTs through the SSRF-guarded client and reduces the outcome to a DeliveryResult. SPEC "Events",
 * rule 4: only the status code is inspected; a 2xx is success, anything else (3xx included, since
 * redirects are not followed) is a failure with the reason recorded.
 */
export async function postForDelivery(
  http: GuardedHttpClient,
  url: string,
  body: string,
  headers: Record<string, string>,
): Promise<DeliveryResult> {
  const startedAt = performance.now();
  try {
    const response = await http.postJson(url, body, headers, { readBody: false });
    const delivered = response.status >= 200 && response.status < 300;
    return {
      delivered,
      status: response.status,
      error: delivered ? null : `receiver answered HTTP ${response.status}`,
      latencyMs: response.latencyMs,
    };
  } catch (error) {
    const latencyMs = error instanceof GuardedRequestError ? error.latencyMs : Math.round(performance.now() - startedAt);
    const reason = error instanceof GuardedRequestError ? `${error.kind}: ${error.message}` : error instanceof Error ? error.message : String(error);
    return { delivered: false, status: null, error: reason, latencyMs };
  }
}
