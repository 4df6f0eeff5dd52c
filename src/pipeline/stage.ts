import type { ChatCompletionChunk } from '../protocol/chat.js';
import type { Operation } from '../protocol/endpoints.js';
import type { Usage } from '../protocol/usage.js';
import type { AuthContext } from '../tenancy/tenancy-types.js';
import type { CallSignal } from '../lib/call-signal.js';
import type { SpendAccount } from '../metering/spend-gate.js';

/**
 * Facts gathered along the way for the response headers and the request log. This is the one
 * mutable part of a call: stages write what they did (headers to emit, deployment used, cost), and
 * the HTTP edge and the request recorder read it. Nothing else is shared between stages.
 */
export interface CallRecord {
  /** x-gw-* and other headers to send with the response. */
  headers: Record<string, string>;
  deploymentId?: string;
  provider?: string;
  attempts?: number;
  cache?: 'hit' | 'miss' | 'skip';
  usage?: Usage;
  costNanos?: number;
  promptVersion?: number;
  abVariant?: string;
  guardrailsTriggered?: string[];
  unpriced?: boolean;
  errorCode?: string;
  /** The credit and budget accounts the meter held the call on (and charges): what undoing its charge later credits back. */
  spendAccounts?: readonly SpendAccount[];
  /** When those accounts were chosen (their budget periods), epoch ms: the date of the call's ledger row. */
  spendAccountsChosenAt?: number;
  /** The request as the pre-call guardrails left it, when they redacted it: the request log records these contents, not the client's. */
  guardedRequest?: Record<string, unknown>;
}

/** One inference call as it moves through the pipeline. Stages pass `{ ...call, request }` onward; they never mutate it. */
export interface GatewayCall<Request = Record<string, unknown>> {
  readonly requestId: string;
  readonly operation: Operation;
  readonly auth: AuthContext;
  /**
   * Set when `auth` came from the key cache before the shared change version was read: true once
   * it is known to be current. The key-confirmation stage makes it part of the call's admission.
   */
  readonly authCurrent?: Promise<boolean>;
  /**
   * Admission checks still in flight (key confirmation, rate limit): see pipeline/admission.ts.
   * Stages that act on the call wait for it first; undefined means admitted.
   */
  readonly admission?: Promise<void>;
  /** The public model id (after templates and A/B tests may have chosen another). */
  readonly model: string;
  /** The validated request body, gw_* fields included until the route stage strips them. */
  readonly request: Request;
  readonly stream: boolean;
  /** Client asked for the usage chunk on a stream (stream_options.include_usage). */
  readonly includeUsage: boolean;
  /** The spec's `user` field, for per-consumer budgets and limits. */
  readonly user: string | undefined;
  /** Aborted when the client disconnects or the request's time cap passes. */
  readonly signal: CallSignal;
  /** performance.now() at arrival. */
  readonly startedAt: number;
  /** Files of a multipart request (images/edits, audio/transcriptions). */
  readonly files?: Readonly<Record<string, UploadedFile>>;
  readonly record: CallRecord;
}

export interface UploadedFile {
  bytes: Buffer;
  filename: string;
  contentType: string;
  /** Files sent after this one under the same name, in order, where an endpoint takes several (image edits' `image[]`). */
  more?: readonly UploadedFile[];
}

/**
 * One event of a chat stream. `raw` is the upstream's JSON text when it needs no change (written
 * as-is, no re-encoding); `chunk` is the parsed form when a stage or translator built or read it.
 * At least one of them is set, except on the cost-only event metering may end a stream with
 * (metering/metered-stream.ts). `usage` is set on the event that carries the call's usage.
 */
export interface StreamEvent {
  raw?: string;
  chunk?: ChatCompletionChunk;
  usage?: Usage;
  /** True for the trailing usage-only chunk gw asked for on the client's behalf. */
  usageOnly?: boolean;
  /** The exact cost in USD as a decimal string, set by metering on the usage event. */
  costUsd?: string;
}

export type Outcome =
  | { kind: 'json'; body: unknown; raw?: Buffer; usage?: Usage; contentType?: string }
  | { kind: 'stream'; events: AsyncIterable<StreamEvent> }
  | { kind: 'binary'; contentType: string; bytes: Uint8Array; usage?: Usage };

export type Next = (call: GatewayCall) => Promise<Outcome>;

/** Onion model: a stage may act before next(), after it, or answer without calling it. */
export interface Stage {
  readonly name: string;
  run(call: GatewayCall, next: Next): Promise<Outcome>;
}
