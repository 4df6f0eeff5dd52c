import { readFileSync } from 'node:fs';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { rootCertificates } from 'node:tls';
import { undiciCore } from './undici-core.js';
import { createSsrfGuard, type HostLookup, SsrfBlockedError, type SsrfGuard } from './ssrf-guard.js';
import type { CallSignal } from './call-signal.js';

/**
 * HTTPS POST to tenant-configured URLs under the SSRF rules of ssrf-guard.ts. Shared by alert
 * channels and webhook guardrails.
 *
 * No DNS-rebinding window: the agent's `connect.lookup` resolves the host, checks every address and
 * hands exactly those addresses to the socket, so the connection goes to what was checked; TLS SNI
 * and the Host header keep the hostname. IP-literal hosts skip DNS and are checked before the call.
 * Redirects are never followed (undici's `request` does not follow them; a 3xx is returned as is).
 */

/** SPEC "Events", webhook rule 4: the receiver must answer within 10 seconds. */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000;

export interface GuardedHttpClientOptions {
  /** Test mode (config.webhookAllowedHosts): `host` or `host:port` entries exempt from the address rules. */
  allowedHosts?: readonly string[];
  /** Test mode (config.webhookCaFile): an extra trusted CA in PEM, used only for allowed hosts. */
  caFile?: string;
  caPem?: string;
  /** Per-request default; SPEC's 10 s unless a test injects a shorter one. */
  timeoutMs?: number;
  /** Responses larger than this fail (guardrail verdicts are small; alert receivers' bodies are ignored). */
  maxResponseBytes?: number;
  lookup?: HostLookup;
}

export interface GuardedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The response body as text, or '' when `readBody` was false. */
  body: string;
  latencyMs: number;
}

export interface GuardedPostOptions {
  timeoutMs?: number;
  /** Read the body (default true); alert deliveries only inspect the status. */
  readBody?: boolean;
  signal?: CallSignal;
}

export type GuardedFailureKind = 'blocked' | 'timeout' | 'network' | 'too_large';

/** A request that produced no HTTP status. */
export class GuardedRequestError extends Error {
  constructor(
    readonly kind: GuardedFailureKind,
    message: string,
    readonly latencyMs: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'GuardedRequestError';
  }
}

export interface GuardedHttpClient {
  readonly timeoutMs: number;
  readonly guard: SsrfGuard;
  /** POSTs `body` with Content-Type application/json (which the caller's headers cannot override). */
  postJson(url: string, body: string | Uint8Array, headers?: Record<string, string>, options?: GuardedPostOptions): Promise<GuardedResponse>;
  close(): Promise<void>;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export function createGuardedHttpClient(options: GuardedHttpClientOptions = {}): GuardedHttpClient {
  const guard = createSsrfGuard({ allowedHosts: options.allowedHosts, lookup: options.lookup });
  const timeoutMs = options.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS;
  const maxResponseBytes = options.maxResponseBytes ?? 1024 * 1024;

  const guardedLookup = (hostname: string, lookupOptions: LookupOptions, callback: LookupCallback): void => {
    guard.resolvePublic(hostname).then(
      (addresses) => {
        if (lookupOptions.all) callback(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
  const publicAgent = new undiciCore.Agent({ connect: { lookup: guardedLookup as never, rejectUnauthorized: true } });

  const caPem = options.caPem ?? (options.caFile ? readFileSync(options.caFile, 'utf8') : undefined);
  // Only test-mode hosts may use the extra CA; public hosts are verified against the system roots alone.
  const testModeAgent = new undiciCore.Agent({ connect: caPem ? { ca: [...rootCertificates, caPem] } : {} });

  async function postJson(
    rawUrl: string,
    body: string | Uint8Array,
    headers: Record<string, string> = {},
    postOptions: GuardedPostOptions = {},
  ): Promise<GuardedResponse> {
    const startedAt = performance.now();
    const elapsed = () => Math.round(performance.now() - startedAt);
    const limitMs = postOptions.timeoutMs ?? timeoutMs;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), limitMs);
    const onOuterAbort = () => controller.abort();
    postOptions.signal?.addEventListener('abort', onOuterAbort, { once: true });
    try {
      // Checked here too, so IP literals (which skip the lookup) and bad schemes fail before any socket opens.
      const checked = await guard.checkUrl(rawUrl);
      const requestHeaders: Record<string, string> = { 'user-agent': 'gw-backend', ...lowerCaseKeys(headers), 'content-type': 'application/json' };
      const response = await undiciCore.request(checked.allowedByTestMode ? testModeAgent : publicAgent, {
        origin: checked.url.origin,
        path: `${checked.url.pathname}${checked.url.search}`,
        method: 'POST',
        headers: requestHeaders,
        body: typeof body === 'string' ? body : Buffer.from(body),
        signal: controller.signal,
      });
      let text = '';
      if (postOptions.readBody === false) {
        await response.body.dump();
      } else {
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of response.body) {
          size += (chunk as Buffer).length;
          if (size > maxResponseBytes) {
            response.body.destroy();
            throw new GuardedRequestError('too_large', `response larger than ${maxResponseBytes} bytes`, elapsed());
          }
          chunks.push(chunk as Buffer);
        }
        text = Buffer.concat(chunks).toString('utf8');
      }
      return { status: response.statusCode, headers: response.headers, body: text, latencyMs: elapsed() };
    } catch (error) {
      throw toGuardedError(error, controller.signal.aborted && !postOptions.signal?.aborted, limitMs, elapsed());
    } finally {
      clearTimeout(timer);
      postOptions.signal?.removeEventListener('abort', onOuterAbort);
    }
  }

  return {
    timeoutMs,
    guard,
    postJson,
    async close() {
      await Promise.all([publicAgent.close(), testModeAgent.close()]);
    },
  };
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function toGuardedError(error: unknown, timedOut: boolean, limitMs: number, latencyMs: number): GuardedRequestError {
  if (error instanceof GuardedRequestError) return error;
  const blocked = findCause(error, (candidate) => candidate instanceof SsrfBlockedError);
  if (blocked) return new GuardedRequestError('blocked', blocked.message, latencyMs, { cause: error });
  if (timedOut) return new GuardedRequestError('timeout', `no response within ${limitMs} ms`, latencyMs, { cause: error });
  const detail = findCause(error, (candidate) => typeof (candidate as { code?: unknown }).code === 'string');
  const code = detail ? (detail as unknown as { code: string }).code : undefined;
  const message = error instanceof Error ? error.message : String(error);
  return new GuardedRequestError('network', code && !message.includes(code) ? `${code}: ${message}` : message, latencyMs, { cause: error });
}

function findCause(error: unknown, predicate: (candidate: Error) => boolean): Error | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    if (predicate(current)) return current;
    current = current.cause;
  }
  return undefined;
}
