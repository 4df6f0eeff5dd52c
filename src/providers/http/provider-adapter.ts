import type { GatewayError } from '../../errors/gateway-error.js';
import type { Operation } from '../../protocol/endpoints.js';
import type { Usage } from '../../protocol/usage.js';
import type { StreamEvent } from '../../pipeline/stage.js';
import type { DeploymentTarget } from '../provider.js';

/** A request ready to send: the adapter builds it, the upstream client sends it. */
export interface UpstreamRequest {
  method: 'POST' | 'GET';
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

/** One framed message of an upstream stream (an SSE event, or a decoded AWS event-stream message). */
export interface UpstreamStreamMessage {
  event?: string;
  data: string;
}

/** Per-stream state lives in the translator instance; create one per stream. */
export interface StreamTranslator {
  translate(message: UpstreamStreamMessage): StreamEvent[];
  /** Called at the end of the upstream stream, e.g. to emit a trailing usage chunk. */
  finish(): StreamEvent[];
}

export interface TranslationContext {
  /** The public model id the client asked for; responses report it. */
  model: string;
  target: DeploymentTarget;
  requestId: string;
  /** Unix seconds for `created`. */
  created: number;
}

/**
 * Pure translation for one operation: canonical request → upstream request, upstream body →
 * canonical body + usage. No I/O here; tests drive these with fixture pairs.
 */
export interface OperationTranslator<Request = unknown> {
  buildRequest(request: Request, context: TranslationContext & { stream: boolean }): UpstreamRequest;
  /** `body` is parsed JSON, or the raw bytes when the upstream answered with binary content. */
  parseResponse(
    body: unknown,
    context: TranslationContext & { contentType: string; raw: Buffer; request?: unknown },
  ): ParsedUpstreamResponse;
  /** Present when the operation streams (chat, completions). */
  createStreamTranslator?(context: TranslationContext): StreamTranslator;
  /**
   * For an upstream that takes at most so many items per call (Cohere embeds 96 texts, Gemini 100):
   * the request as parts it accepts, sent one after another; undefined when it fits in one.
   * `mergeBodies` joins the parts' canonical bodies, in order, into the answer to the whole.
   */
  splitRequest?(request: Request): Request[] | undefined;
  mergeBodies?(bodies: unknown[]): unknown;
}

export interface ParsedUpstreamResponse {
  body: unknown;
  usage?: Usage;
  binary?: { contentType: string; bytes: Uint8Array };
  /** The upstream bytes already are the canonical answer: send them as they are, without re-encoding. */
  passthrough?: boolean;
  /** With `passthrough`: the bytes to send instead of the upstream's (the same answer with a field rewritten in place). */
  raw?: Buffer;
}

export type StreamFraming = 'sse' | 'aws-eventstream' | 'ndjson';

export interface ProviderAdapter {
  readonly id: string;
  readonly streamFraming: StreamFraming;
  readonly translators: Partial<Record<Operation, OperationTranslator<any>>>;
  /** Maps an upstream error answer to a GatewayError with an upstream_* code (keep the status in details). */
  parseError(status: number, body: unknown, headers: Record<string, string | string[] | undefined>): GatewayError;
}
