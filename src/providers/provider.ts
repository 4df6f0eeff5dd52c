import type { Operation } from '../protocol/endpoints.js';
import type { GatewayCall, Outcome } from '../pipeline/stage.js';
import type { CallSignal } from '../lib/call-signal.js';

/** Timeouts of one deployment; the router caps them by the request's own deadline. */
export interface Timeouts {
  connectMs: number;
  /** Time until the response headers (non-stream) or the first stream event. */
  firstByteMs: number;
  totalMs: number;
}

/** Everything a provider needs to reach one deployment. Credentials are already decrypted. */
export interface DeploymentTarget {
  deploymentId: string;
  provider: string;
  /** The model name the upstream knows. */
  upstreamModel: string;
  baseUrl?: string;
  apiKey?: string;
  /** Provider-specific settings: api-version (Azure), region and secret (Bedrock), etc. */
  settings: Readonly<Record<string, string>>;
  timeouts: Timeouts;
}

export interface Invocation {
  call: GatewayCall;
  target: DeploymentTarget;
  /** Aborts the upstream call: the client left, or a timeout passed. */
  signal: CallSignal;
}

/**
 * What the router calls. HTTP providers are built from a pure ProviderAdapter plus the shared
 * upstream client (providers/http/create-http-provider.ts); `local` implements this directly.
 *
 * A returned outcome carries canonical bodies (the OpenAI shapes in protocol/) with `model` set to
 * the public id, and `usage` whenever the upstream reported it. Failures are thrown as GatewayError
 * with an `upstream_*` code so the router can decide to retry from `retryable`.
 */
export interface Provider {
  readonly id: string;
  readonly operations: ReadonlySet<Operation>;
  /**
   * True when invoke() and the stream it returns reject promptly once the invocation's signal
   * aborts (the HTTP providers: undici aborts the request and its body). The router then needs
   * no abort watcher of its own around each promise and each stream event.
   */
  readonly honoursAbortSignal?: boolean;
  /**
   * True when the provider runs inside the gateway (the built-in `local` one): it has no remote
   * upstream that could be down, its failures come from the request itself (prompt markers), so the
   * router keeps no circuit for its deployments (docs/routing.md "Circuit breaker").
   */
  readonly inProcess?: boolean;
  invoke(invocation: Invocation): Promise<Outcome>;
}
