import type { Usage } from '../protocol/usage.js';
import type { ModelPrice } from './model-price.js';
import { parseUsdPico } from './format-usd.js';

/** One priced line of a cost: how much of a unit, at which price, and that line's own rounded cost. */
export interface CostLine {
  unit: string;
  quantity: number;
  /** The USD price applied (per million tokens/characters, per image, per minute…); null when none applies. */
  priceUsd: string | null;
  nanos: number;
}

export interface Cost {
  /** The total, rounded once (half up) to a nano-dollar; lines are informational and may not sum to it exactly. */
  costNanos: number;
  /** A unit was consumed that has no price at all: the total counts only the priced units. */
  unpriced: boolean;
  /** True when the upstream reported the cost itself and it was used as is. */
  reported: boolean;
  breakdown: CostLine[];
  /** True when the cost could not be computed and the call's hold was charged instead (meter-stage.ts). */
  fromHold?: boolean;
}

/*
 * Every line is accumulated as an exact BigInt numerator over one common denominator, so nothing
 * rounds until the end. With p = a price in pico-USD (1e-12):
 *   per million tokens/characters: nanos = q·p / 1e9
 *   per unit (image, search unit, OCR page):  nanos = q·p / 1e3
 *   per second, from milliseconds (video):    nanos = ms·p / 1e6
 *   per minute, from milliseconds (audio):    nanos = ms·p / 6e7
 * The least common multiple of those divisors is 3e9.
 */
const DENOMINATOR = 3_000_000_000n;
const PER_MILLION = 3n;
const PER_UNIT = 3_000_000n;
const PER_SECOND_FROM_MS = 3_000n;
const PER_MINUTE_FROM_MS = 50n;

function roundHalfUp(numerator: bigint): number {
  return Number((numerator + DENOMINATOR / 2n) / DENOMINATOR);
}

interface Accumulator {
  total: bigint;
  unpriced: boolean;
  lines: CostLine[];
}

function addLine(acc: Accumulator, unit: string, quantity: number | undefined, price: string | undefined, scale: bigint, scaledQuantity?: bigint): void {
  if (!quantity) return;
  if (price === undefined) {
    acc.unpriced = true;
    acc.lines.push({ unit, quantity, priceUsd: null, nanos: 0 });
    return;
  }
  const numerator = (scaledQuantity ?? BigInt(quantity)) * parseUsdPico(price) * scale;
  acc.total += numerator;
  acc.lines.push({ unit, quantity, priceUsd: price, nanos: roundHalfUp(numerator) });
}

/** Seconds to whole milliseconds (half up): audio and video durations are priced to the millisecond. */
function milliseconds(seconds: number): bigint {
  return BigInt(Math.round(seconds * 1000));
}

/** The price of one image of a size and quality: "1024x1024/high", then "1024x1024", then "default". */
export function imagePrice(price: ModelPrice, size: string, quality: string): string | undefined {
  const table = price.perImage;
  if (!table) return undefined;
  return table[`${size}/${quality}`] ?? table[size] ?? table.default;
}

/**
 * The exact cost of a call from the usage the upstream reported. Token classes are disjoint (see
 * protocol/usage.ts) and each is priced once; a class without its own price falls back to its
 * parent (reasoning and audio output → output; cached, cache-write, audio and image input → input).
 * A cost the upstream reported itself wins over our prices.
 */
export function computeCost(usage: Usage, price: ModelPrice | undefined): Cost {
  if (usage.reportedCostNanos !== undefined && Number.isSafeInteger(usage.reportedCostNanos) && usage.reportedCostNanos >= 0) {
    return { costNanos: usage.reportedCostNanos, unpriced: false, reported: true, breakdown: [] };
  }
  const p: ModelPrice = price ?? {};
  const acc: Accumulator = { total: 0n, unpriced: false, lines: [] };
  const input = p.inputPerMillion;
  const output = p.outputPerMillion;
  addLine(acc, 'input_tokens', usage.inputTokens, input, PER_MILLION);
  addLine(acc, 'cached_input_tokens', usage.cachedInputTokens, p.cachedInputPerMillion ?? input, PER_MILLION);
  addLine(acc, 'cache_write_input_tokens', usage.cacheWriteInputTokens, p.cacheWriteInputPerMillion ?? input, PER_MILLION);
  addLine(acc, 'audio_input_tokens', usage.audioInputTokens, p.audioInputPerMillion ?? input, PER_MILLION);
  addLine(acc, 'image_input_tokens', usage.imageInputTokens, p.imageInputPerMillion ?? input, PER_MILLION);
  addLine(acc, 'output_tokens', usage.outputTokens, output, PER_MILLION);
  addLine(acc, 'reasoning_tokens', usage.reasoningTokens, p.reasoningPerMillion ?? output, PER_MILLION);
  addLine(acc, 'audio_output_tokens', usage.audioOutputTokens, p.audioOutputPerMillion ?? output, PER_MILLION);
  if (usage.images) {
    for (const image of usage.images) {
      addLine(acc, `image:${image.size}/${image.quality}`, image.count, imagePrice(p, image.size, image.quality), PER_UNIT);
    }
  }
  addLine(acc, 'speech_characters', usage.speechCharacters, p.speechPerMillionCharacters, PER_MILLION);
  if (usage.transcriptionSeconds) {
    const ms = milliseconds(usage.transcriptionSeconds);
    addLine(acc, 'transcription_seconds', usage.transcriptionSeconds, p.transcriptionPerMinute, PER_MINUTE_FROM_MS, ms);
  }
  addLine(acc, 'search_units', usage.searchUnits, p.perSearchUnit, PER_UNIT);
  addLine(acc, 'ocr_pages', usage.ocrPages, p.perOcrPage, PER_UNIT);
  if (usage.videoSeconds) {
    addLine(acc, 'video_seconds', usage.videoSeconds, p.perVideoSecond, PER_SECOND_FROM_MS, milliseconds(usage.videoSeconds));
  }
  return { costNanos: roundHalfUp(acc.total), unpriced: acc.unpriced, reported: false, breakdown: acc.lines };
}

/** True when the price can bill at least one unit of the operation's main kind (used to refuse unpriced models early). */
export function hasAnyPrice(price: ModelPrice | undefined): boolean {
  if (!price) return false;
  return Object.entries(price).some(([field, value]) => field !== 'maxOutputTokens' && field !== 'contextWindow' && value !== undefined);
}
