import type { GatewayCall, Next, Outcome, Stage, StreamEvent } from '../pipeline/stage.js';
import type { ChatCompletion, ChatCompletionChunk } from '../protocol/chat.js';
import { usageToOpenAI } from '../protocol/usage.js';
import { tapStream } from '../lib/tap-stream.js';
import { createChatStreamAssembler } from './assemble-chat-stream.js';
import { cacheKey } from './cache-key.js';
import { canReplayAsStream, replayChatCompletion } from './replay-chat-completion.js';
import type { ResponseCache } from './response-cache.js';
import { admitted } from '../pipeline/admission.js';

const CACHED_OPERATIONS = new Set(['chat', 'completion', 'embedding']);

export interface CacheStageDeps {
  cache: ResponseCache;
  /** A cache backend failure is reported here and the call goes on uncached (the cache is an optimisation). */
  onError?(error: unknown): void;
}

/**
 * Exact-match response cache for chat completions, completions and embeddings. On unless the org
 * turned it off (settings.cacheDefault) or the request says `gw_cache: false`. A hit is answered
 * here (record.cache = 'hit', which metering charges as 0) and replayed as chunks for a stream; a
 * miss stores the complete, successful answer, and a streamed answer is assembled into the same
 * ChatCompletion a non-streamed request stores, so both share one entry. Answers served by a
 * fallback model are not stored. It sits inside the output guardrails, so it stores the upstream's
 * answer and every hit is checked by the receiving call's guardrails (docs/caching.md).
 */
export function createCacheStage(deps: CacheStageDeps): Stage {
  const report = (error: unknown) => deps.onError?.(error);
  return {
    name: 'cache',
    run(call, next) {
      if (!CACHED_OPERATIONS.has(call.operation)) return next(call);
      const requested = (call.request as { gw_cache?: unknown }).gw_cache;
      const enabled = typeof requested === 'boolean' ? requested : call.auth.org.settings.cacheDefault;
      const ttlMs = call.auth.org.settings.cacheTtlSeconds * 1000;
      // Only chat has a stream format we can assemble and replay.
      if (!enabled || !(ttlMs > 0) || (call.stream && call.operation !== 'chat')) {
        call.record.cache = 'skip';
        return next(call);
      }
      return lookUp(call, next, ttlMs);
    },
  };

  async function lookUp(call: GatewayCall, next: Next, ttlMs: number): Promise<Outcome> {
    const key = cacheKey({ orgId: call.auth.org.id, operation: call.operation, model: call.model, request: call.request });
    // The lookup goes out with the admission checks (with Redis, in the same write: one round trip
    // for both), but a refused call is not answered from the cache: the entry is used only once
    // admission passed.
    const lookup = deps.cache.get(key).catch((error: unknown) => {
      report(error);
      return undefined;
    });
    await admitted(call);
    const cached = await lookup;
    // A stored answer with parts a stream cannot replay (audio, annotations) answers JSON requests only.
    if (cached !== undefined && (!call.stream || canReplayAsStream(cached as ChatCompletion))) {
      call.record.cache = 'hit';
      call.record.headers['x-gw-cache'] = 'hit';
      if (call.stream) return { kind: 'stream', events: replayEvents(replayChatCompletion(cached as ChatCompletion, call.includeUsage)) };
      return { kind: 'json', body: cached };
    }
    call.record.cache = 'miss';
    call.record.headers['x-gw-cache'] = 'miss';
    const outcome = await next(call);
    const store = (value: unknown) => {
      // Checked when the answer is complete: the router marks the route before it hands the answer back.
      if (servedByFallback(call)) return;
      deps.cache.set(key, value, ttlMs).catch(report);
    };
    if (outcome.kind === 'json') {
      if (isCompleteAnswer(call, outcome.body)) store(outcome.body);
      return outcome;
    }
    if (outcome.kind === 'stream' && call.operation === 'chat') return { kind: 'stream', events: assembleWhileStreaming(call, outcome.events, store) };
    return outcome;
  }
}

function assembleWhileStreaming(call: GatewayCall, events: AsyncIterable<StreamEvent>, store: (value: unknown) => void): AsyncIterable<StreamEvent> {
  const assembler = createChatStreamAssembler();
  let malformed = false;
  return tapStream(events, {
    onItem(event) {
      try {
        const chunk = event.chunk ?? (event.raw !== undefined ? (JSON.parse(event.raw) as ChatCompletionChunk) : undefined);
        if (chunk) assembler.add(chunk);
        if (event.usage) assembler.setUsage(usageToOpenAI(event.usage));
      } catch {
        malformed = true;
      }
    },
    onEnd({ completed }) {
      if (!completed || malformed || call.signal.aborted) return;
      const completion = assembler.finish();
      if (completion && isCompleteAnswer(call, completion)) store(completion);
    },
  });
}

/**
 * A fallback model's answer is not the requested model's: stored under the requested model's key it
 * would be served as that model's answer for the whole TTL. The router names the model that served
 * in x-gw-route (`;fallback=<model id>`, docs/routing.md).
 */
function servedByFallback(call: GatewayCall): boolean {
  return (call.record.headers['x-gw-route'] ?? '').includes(';fallback=');
}

/** Only whole, successful answers are worth replaying: every choice finished normally. */
function isCompleteAnswer(call: GatewayCall, body: unknown): boolean {
  if (body === null || typeof body !== 'object') return false;
  if (call.operation === 'embedding') {
    const data = (body as { data?: unknown }).data;
    return Array.isArray(data) && data.length > 0;
  }
  const choices = (body as { choices?: Array<{ finish_reason?: unknown }> }).choices;
  if (!Array.isArray(choices) || choices.length === 0) return false;
  return choices.every((choice) => ['stop', 'length', 'tool_calls', 'function_call'].includes(String(choice?.finish_reason)));
}

async function* replayEvents(events: StreamEvent[]): AsyncGenerator<StreamEvent> {
  yield* events;
}
