import type { GatewayCall } from '../pipeline/stage.js';
import { COMPLETION_DEFAULT_MAX_TOKENS } from '../protocol/completions.js';
import { documentReference } from '../protocol/ocr.js';
import type { Usage } from '../protocol/usage.js';
import { parseUsdPico } from './format-usd.js';
import type { ModelPrice } from './model-price.js';
import type { TokenCounter } from './token-counter.js';

/** Bounds used where a request does not say how much it can consume (docs/money.md, "Reservations"). */
export interface EstimateLimits {
  /** Output tokens reserved when neither the request nor the price names a maximum. */
  defaultMaxOutputTokens: number;
  /** Transcription: seconds are bounded by file size at this (low) bitrate: 32 kbit/s = 4000 B/s. */
  transcriptionBytesPerSecond: number;
  /** OCR of a document whose pages cannot be counted from the request (a URL). */
  ocrDefaultPages: number;
  /** Video requests without `seconds`. */
  videoDefaultSeconds: number;
}

export const DEFAULT_ESTIMATE_LIMITS: EstimateLimits = {
  defaultMaxOutputTokens: 4096,
  transcriptionBytesPerSecond: 4000,
  ocrDefaultPages: 20,
  videoDefaultSeconds: 12,
};

/** Cohere bills one search unit per query and up to 100 documents; a document over 500 tokens counts as several. */
const DOCUMENTS_PER_SEARCH_UNIT = 100;
const SEARCH_CHUNK_CHARACTERS = 2000;

type Body = Record<string, unknown>;

function positiveInt(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}

/** Prompt tokens of a token-billed request (chat, completion, embedding); 0 for other operations. */
export function countPromptTokens(call: Pick<GatewayCall, 'operation' | 'request'>, counter: TokenCounter): number {
  return counter.once(call.request, () => countBodyTokens(call, counter));
}

function countBodyTokens(call: Pick<GatewayCall, 'operation' | 'request'>, counter: TokenCounter): number {
  const body = call.request as Body;
  switch (call.operation) {
    case 'chat':
      return counter.countMessages((body.messages as Body[]) ?? [], body.tools);
    case 'completion':
    case 'embedding': {
      const input = call.operation === 'completion' ? body.prompt : body.input;
      if (typeof input === 'string') return counter.count(input);
      if (!Array.isArray(input)) return 0;
      let total = 0;
      for (const item of input) {
        if (typeof item === 'string') total += counter.count(item);
        else if (typeof item === 'number') total += 1;
        else if (Array.isArray(item)) total += item.length;
      }
      return total;
    }
    default:
      return 0;
  }
}

/** The most output tokens a token-billed request can produce (all choices together). */
export function maxOutputTokens(call: Pick<GatewayCall, 'operation' | 'request'>, price: ModelPrice | undefined, limits: EstimateLimits): number {
  const body = call.request as Body;
  const choices = positiveInt(body.n) ?? 1;
  if (call.operation === 'chat') {
    const perChoice = positiveInt(body.max_completion_tokens) ?? positiveInt(body.max_tokens) ?? price?.maxOutputTokens ?? limits.defaultMaxOutputTokens;
    return perChoice * choices;
  }
  if (call.operation === 'completion') {
    const prompts = Array.isArray(body.prompt) && typeof body.prompt[0] === 'string' ? body.prompt.length : 1;
    return (positiveInt(body.max_tokens) ?? COMPLETION_DEFAULT_MAX_TOKENS) * choices * prompts;
  }
  return 0;
}

function countPdfPages(reference: string): number | undefined {
  const match = /^data:application\/pdf;base64,/.exec(reference);
  if (!match) return /^data:image\//.test(reference) ? 1 : undefined;
  const text = Buffer.from(reference.slice(match[0].length), 'base64').toString('latin1');
  const pages = text.match(/\/Type\s*\/Page(?!s)/g)?.length ?? 0;
  return Math.max(1, pages);
}

function priceAbove(candidate: string | undefined, reference: string | undefined): boolean {
  if (candidate === undefined) return false;
  if (reference === undefined) return true;
  return parseUsdPico(candidate) > parseUsdPico(reference);
}

/**
 * The most a call can consume, as a Usage to price with computeCost: the reservation. It errs high
 * (every prompt token at the full input price, the whole output budget at the dearer of the output
 * and reasoning prices) because the settlement from the upstream's usage releases the rest.
 */
export function estimateMaxUsage(call: GatewayCall, price: ModelPrice | undefined, counter: TokenCounter, limits: EstimateLimits): Usage {
  const body = call.request as Body;
  switch (call.operation) {
    case 'chat':
    case 'completion':
    case 'embedding': {
      const usage: Usage = { inputTokens: countPromptTokens(call, counter) };
      const output = maxOutputTokens(call, price, limits);
      if (output > 0) {
        if (priceAbove(price?.reasoningPerMillion, price?.outputPerMillion)) usage.reasoningTokens = output;
        else usage.outputTokens = output;
      }
      return usage;
    }
    case 'image_generation':
    case 'image_edit': {
      const count = positiveInt(body.n) ?? 1;
      const size = typeof body.size === 'string' ? body.size : '1024x1024';
      const quality = typeof body.quality === 'string' ? body.quality : 'auto';
      return { images: [{ size, quality, count }] };
    }
    case 'speech':
      return { speechCharacters: typeof body.input === 'string' ? body.input.length : 0 };
    case 'transcription': {
      const bytes = call.files?.file?.bytes.length ?? 0;
      return { transcriptionSeconds: Math.max(1, Math.ceil(bytes / limits.transcriptionBytesPerSecond)) };
    }
    case 'rerank': {
      const documents = Array.isArray(body.documents) ? body.documents : [];
      let chunks = 0;
      for (const document of documents) {
        const text = typeof document === 'string' ? document : String((document as Body)?.text ?? '');
        chunks += Math.max(1, Math.ceil(text.length / SEARCH_CHUNK_CHARACTERS));
      }
      return { searchUnits: Math.max(1, Math.ceil(chunks / DOCUMENTS_PER_SEARCH_UNIT)) };
    }
    case 'ocr': {
      const reference = documentReference(body.document as Parameters<typeof documentReference>[0]);
      return { ocrPages: countPdfPages(reference) ?? limits.ocrDefaultPages };
    }
    case 'video':
      return { videoSeconds: positiveInt(body.seconds) ?? limits.videoDefaultSeconds };
    default:
      return {};
  }
}
