import { Agent, errors as undiciErrors, type Dispatcher } from 'undici';
import { GatewayError } from '../../errors/gateway-error.js';
import type { UpstreamRequest } from './provider-adapter.js';

/**
 * The one HTTP client for upstream calls: an undici Agent (a keep-alive pool per origin) and
 * `request()`, the lowest-overhead client API in Node. Network failures become GatewayErrors with
 * the spec's statuses: timeouts 504, refused/reset connections 503, broken answers 502.
 */
export interface UpstreamClient {
  send(request: UpstreamRequest, options: SendOptions): Promise<Dispatcher.ResponseData>;
  close(): Promise<void>;
}

export interface SendOptions {
  signal: AbortSignal;
  /** Time allowed until response headers arrive. */
  firstByteMs: number;
  /** Longest silence allowed between body chunks. */
  idleMs: number;
  /** Time allowed to open the connection (TCP + TLS); the client's default when absent. */
  connectMs?: number;
  provider: string;
}

export interface UpstreamClientOptions {
  connectTimeoutMs?: number;
  connectionsPerOrigin?: number;
  keepAliveTimeoutMs?: number;
  /** Extra CA or TLS settings for tests. */
  connect?: Record<string, unknown>;
}

export function createUpstreamClient(options: UpstreamClientOptions = {}): UpstreamClient {
  const defaultConnectMs = options.connectTimeoutMs ?? 10_000;
  const createAgent = (connectMs: number) =>
    new Agent({
      connections: options.connectionsPerOrigin ?? 256,
      pipelining: 1,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
      keepAliveMaxTimeout: 600_000,
      connect: { timeout: connectMs, ...options.connect },
    });
  // undici sets the connect timeout per pool, so each distinct deployment connect timeout gets its
  // own keep-alive agent (there are a handful at most).
  const agents = new Map<number, Agent>([[defaultConnectMs, createAgent(defaultConnectMs)]]);
  const agentFor = (connectMs: number | undefined) => {
    const key = connectMs ?? defaultConnectMs;
    let agent = agents.get(key);
    if (!agent) agents.set(key, (agent = createAgent(key)));
    return agent;
  };
  const urlParts = new Map<string, { origin: string; path: string }>();
  return {
    async send(request, sendOptions) {
      try {
        const { origin, path } = splitUrl(request.url, urlParts);
        return await agentFor(sendOptions.connectMs).request({
          origin,
          path,
          method: request.method,
          headers: request.headers,
          body: request.body,
          signal: sendOptions.signal,
          headersTimeout: sendOptions.firstByteMs,
          bodyTimeout: sendOptions.idleMs,
        });
      } catch (error) {
        throw toUpstreamError(error, sendOptions.provider, sendOptions.signal);
      }
    },
    close: async () => {
      await Promise.all([...agents.values()].map((agent) => agent.close()));
    },
  };
}

/**
 * Origin and path of an upstream URL. A gateway calls the same few URLs again and again, and WHATWG
 * URL parsing is costly enough to show in a profile, so results are remembered (bounded).
 */
function splitUrl(url: string, cache: Map<string, { origin: string; path: string }>): { origin: string; path: string } {
  let parts = cache.get(url);
  if (!parts) {
    const parsed = new URL(url);
    parts = { origin: parsed.origin, path: parsed.pathname + parsed.search };
    if (cache.size >= 1000) cache.clear();
    cache.set(url, parts);
  }
  return parts;
}

/** Maps a transport failure to the spec's statuses. A client abort is rethrown as it is. */
export function toUpstreamError(error: unknown, provider: string, signal?: AbortSignal): unknown {
  if (error instanceof GatewayError) return error;
  if (signal?.aborted) {
    const reason = signal.reason;
    if (reason instanceof GatewayError) return reason;
    return error;
  }
  if (
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError ||
    error instanceof undiciErrors.ConnectTimeoutError
  ) {
    return new GatewayError('upstream_timeout', `The provider did not respond in time (${provider}).`, { provider, cause: error });
  }
  const code = (error as { code?: string } | undefined)?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH') {
    return new GatewayError('upstream_unavailable', `The provider is unreachable (${provider}).`, { provider, cause: error });
  }
  return new GatewayError('upstream_bad_response', `The provider connection failed (${provider}).`, { provider, cause: error });
}
