import type { OpenAI } from 'openai';
import { Stream } from 'openai/core/streaming';
import { gwStreamError } from './gw-errors.js';
import { setCost, type GwResponseMeta } from './response-meta.js';

/**
 * An `openai` Stream that also carries the call's gw metadata. The headers are read when the
 * stream opens; the cost is only known at the end, so `meta.costUsd` (and the nano/micro forms)
 * fill in when the final usage chunk, which gw extends with `gw_cost_usd`, has been read.
 */
export class GwStream<Item> extends Stream<Item> {
  readonly meta: GwResponseMeta;

  constructor(iterator: () => AsyncIterator<Item>, controller: AbortController, meta: GwResponseMeta, client?: OpenAI) {
    super(iterator, controller, client);
    this.meta = meta;
  }
}

export interface MeteredStreamOptions {
  /**
   * Drop the trailing usage-only chunk: set when the client asked for usage on the caller's
   * behalf (to learn the cost), so the caller sees the same chunks as without this library.
   */
  hideUsageChunk: boolean;
}

/** Wraps a Stream so that the cost on its usage chunk lands in `meta`. */
export function meteredStream<Item>(
  source: Stream<Item>,
  meta: GwResponseMeta,
  options: MeteredStreamOptions,
  client?: OpenAI,
): GwStream<Item> {
  async function* observe(): AsyncGenerator<Item> {
    try {
      for await (const item of source) {
        const cost = chunkCost(item);
        if (cost !== undefined) setCost(meta, cost);
        if (options.hideUsageChunk && isUsageOnlyChunk(item)) continue;
        yield item;
      }
    } catch (error) {
      throw gwStreamError(error);
    }
  }
  return new GwStream(observe, source.controller, meta, client);
}

/** `gw_cost_usd` of a chunk, on the chunk itself or inside its usage object. */
function chunkCost(item: unknown): string | undefined {
  if (!item || typeof item !== 'object') return undefined;
  const record = item as { gw_cost_usd?: unknown; usage?: { gw_cost_usd?: unknown } | null };
  const cost = record.gw_cost_usd ?? record.usage?.gw_cost_usd;
  if (typeof cost === 'string') return cost;
  // A JSON number is accepted too, through its shortest decimal text (exact for nano-USD amounts).
  if (typeof cost === 'number' && Number.isFinite(cost)) return String(cost);
  return undefined;
}

function isUsageOnlyChunk(item: unknown): boolean {
  if (!item || typeof item !== 'object') return false;
  const record = item as { choices?: unknown[]; usage?: unknown };
  return Boolean(record.usage) && Array.isArray(record.choices) && record.choices.length === 0;
}
