import type { AnswerStream } from './answer-stream.js';
import { toOpenAIErrorBody } from '../errors/gateway-error.js';
import type { StreamEvent } from '../pipeline/stage.js';
import { toGatewayError } from './error-handler.js';

const DONE = 'data: [DONE]\n\n';
export const COST_TRAILER = 'x-gw-request-cost';

export interface SseWriteOptions {
  /** Headers to send before the first event (x-gw-*, rate-limit headers…). */
  headers: Record<string, string>;
  /** The client asked for the usage chunk (stream_options.include_usage). */
  includeUsage: boolean;
  /** Called when an error ends the stream after headers were sent. */
  onError?(error: unknown): void;
}

export interface SseWriteResult {
  completed: boolean;
  costUsd?: string;
  error?: unknown;
}

/**
 * Writes a chat stream as server-sent events: each event as `data: <json>`, then `data: [DONE]`.
 * Upstream JSON text is written as it came (no re-encoding). The exact cost goes into the final
 * usage chunk (`gw_cost_usd`) and into the `x-gw-request-cost` HTTP trailer; an event with a cost
 * and neither `raw` nor `chunk` only sets the trailer (a stream with no usage chunk to carry it).
 * An error after the headers ends the stream with a `data: {"error":…}` event and no [DONE], so
 * clients can tell a broken stream from a finished one. This file alone owns the SSE framing.
 */
export async function writeSseStream(
  response: AnswerStream,
  events: AsyncIterable<StreamEvent>,
  options: SseWriteOptions,
): Promise<SseWriteResult> {
  response.statusCode = 200;
  for (const [name, value] of Object.entries(options.headers)) response.setHeader(name, value);
  response.setHeader('content-type', 'text/event-stream; charset=utf-8');
  response.setHeader('cache-control', 'no-cache');
  response.setHeader('connection', 'keep-alive');
  response.setHeader('x-accel-buffering', 'no');
  response.setHeader('trailer', COST_TRAILER);
  // No flushHeaders(): the router hands over a stream only once its first event has arrived, so
  // the headers go out in the same write (and packet) as that event, one syscall sooner.

  let costUsd: string | undefined;
  try {
    for await (const event of events) {
      if (response.destroyed) return { completed: false, costUsd };
      if (event.costUsd !== undefined) costUsd = event.costUsd;
      const text = serialise(event, options.includeUsage);
      if (text === undefined) continue;
      if (!response.write(`data: ${text}\n\n`)) await drained(response);
    }
  } catch (error) {
    options.onError?.(error);
    if (!response.destroyed) {
      response.write(`data: ${JSON.stringify(toOpenAIErrorBody(toGatewayError(error)))}\n\n`);
      response.end();
    }
    return { completed: false, costUsd, error };
  }
  if (response.destroyed) return { completed: false, costUsd };
  response.write(DONE);
  if (costUsd !== undefined) response.addTrailers({ [COST_TRAILER]: costUsd });
  response.end();
  return { completed: true, costUsd };
}

function serialise(event: StreamEvent, includeUsage: boolean): string | undefined {
  // A cost-only event (metering/metered-stream.ts) has nothing to send: its cost goes in the trailer.
  if (event.raw === undefined && event.chunk === undefined) return undefined;
  if (event.usageOnly && !includeUsage) return undefined;
  if (event.usage && !includeUsage) {
    // The client did not ask for usage: forward the content of this chunk without it.
    const chunk = event.chunk ?? JSON.parse(event.raw!);
    return JSON.stringify({ ...chunk, usage: undefined });
  }
  if (event.costUsd !== undefined) {
    const chunk = event.chunk ?? JSON.parse(event.raw!);
    return JSON.stringify({ ...chunk, gw_cost_usd: event.costUsd });
  }
  return event.raw ?? JSON.stringify(event.chunk);
}

function drained(response: AnswerStream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}
