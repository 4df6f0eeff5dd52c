import type { ModelPrice } from './model-price.js';

/**
 * Shipped list prices (USD, per million tokens unless the field says otherwise) for the models in
 * our presets, as the providers publish them for standard (non-batch, short-context) use. Operators
 * override them per deployment, globally or per org (PUT /api/admin/pricing/…); the built-in
 * `local` models add their own prices (providers/local/local-models.ts).
 */
const openAiChat = (input: string, cached: string, output: string, maxOutputTokens: number, contextWindow: number): ModelPrice => ({
  inputPerMillion: input,
  cachedInputPerMillion: cached,
  outputPerMillion: output,
  maxOutputTokens,
  contextWindow,
});

const anthropic = (input: string, output: string, maxOutputTokens: number): ModelPrice => ({
  inputPerMillion: input,
  // Anthropic bills cache reads at 0.1× and 5-minute cache writes at 1.25× the input price.
  cachedInputPerMillion: scale(input, 10, 100),
  cacheWriteInputPerMillion: scale(input, 125, 100),
  outputPerMillion: output,
  maxOutputTokens,
  contextWindow: 200_000,
});

/** input × numerator / denominator as an exact decimal string (prices have at most 12 decimals). */
function scale(amount: string, numerator: number, denominator: number): string {
  const [whole, fraction = ''] = amount.split('.');
  const pico = (BigInt(whole) * 10n ** 12n + BigInt(fraction.padEnd(12, '0'))) * BigInt(numerator) / BigInt(denominator);
  const text = pico.toString().padStart(13, '0');
  return `${text.slice(0, -12)}.${text.slice(-12)}`.replace(/\.?0+$/, '') || '0';
}

const gptImageSizes = (low: string, medium: string, high: string) => ({ low, medium, high });
const gptImage1 = (() => {
  const square = gptImageSizes('0.011', '0.042', '0.167');
  const tall = gptImageSizes('0.016', '0.063', '0.25');
  const table: Record<string, string> = { default: tall.high };
  for (const [size, prices] of [['1024x1024', square], ['1024x1536', tall], ['1536x1024', tall]] as const) {
    table[`${size}/low`] = prices.low;
    table[`${size}/medium`] = prices.medium;
    table[`${size}/high`] = prices.high;
    // "auto" and unspecified quality are billed at whatever the upstream chose; the reservation takes the highest.
    table[size] = prices.high;
  }
  return table;
})();

export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = {
  'gpt-4o': openAiChat('2.50', '1.25', '10.00', 16_384, 128_000),
  'gpt-4o-mini': openAiChat('0.15', '0.075', '0.60', 16_384, 128_000),
  'gpt-4.1': openAiChat('2.00', '0.50', '8.00', 32_768, 1_047_576),
  'gpt-4.1-mini': openAiChat('0.40', '0.10', '1.60', 32_768, 1_047_576),
  'gpt-4.1-nano': openAiChat('0.10', '0.025', '0.40', 32_768, 1_047_576),
  'gpt-5': openAiChat('1.25', '0.125', '10.00', 128_000, 400_000),
  'gpt-5-mini': openAiChat('0.25', '0.025', '2.00', 128_000, 400_000),
  'gpt-5-nano': openAiChat('0.05', '0.005', '0.40', 128_000, 400_000),
  o3: openAiChat('2.00', '0.50', '8.00', 100_000, 200_000),
  'o3-mini': openAiChat('1.10', '0.55', '4.40', 100_000, 200_000),
  'o4-mini': openAiChat('1.10', '0.275', '4.40', 100_000, 200_000),
  'text-embedding-3-small': { inputPerMillion: '0.02' },
  'text-embedding-3-large': { inputPerMillion: '0.13' },
  'text-embedding-ada-002': { inputPerMillion: '0.10' },
  'dall-e-3': { perImage: { '1024x1024': '0.04', '1024x1024/hd': '0.08', default: '0.12' } },
  'dall-e-2': { perImage: { '1024x1024': '0.02', default: '0.02' } },
  'gpt-image-1': { inputPerMillion: '5.00', imageInputPerMillion: '10.00', perImage: gptImage1 },
  'tts-1': { speechPerMillionCharacters: '15.00' },
  'tts-1-hd': { speechPerMillionCharacters: '30.00' },
  'whisper-1': { transcriptionPerMinute: '0.006' },
  'gpt-4o-transcribe': { transcriptionPerMinute: '0.006' },
  'gpt-4o-mini-transcribe': { transcriptionPerMinute: '0.003' },
  'sora-2': { perVideoSecond: '0.10' },
  'sora-2-pro': { perVideoSecond: '0.30' },
  'claude-opus-4-5': anthropic('5.00', '25.00', 64_000),
  'claude-opus-4-1': anthropic('15.00', '75.00', 32_000),
  'claude-opus-4-0': anthropic('15.00', '75.00', 32_000),
  'claude-sonnet-4-5': anthropic('3.00', '15.00', 64_000),
  'claude-sonnet-4-0': anthropic('3.00', '15.00', 64_000),
  'claude-3-7-sonnet-latest': anthropic('3.00', '15.00', 64_000),
  'claude-haiku-4-5': anthropic('1.00', '5.00', 64_000),
  'claude-3-5-haiku-latest': anthropic('0.80', '4.00', 8_192),
  'gemini-2.5-pro': { inputPerMillion: '1.25', cachedInputPerMillion: '0.125', outputPerMillion: '10.00', maxOutputTokens: 65_536, contextWindow: 1_048_576 },
  'gemini-2.5-flash': { inputPerMillion: '0.30', cachedInputPerMillion: '0.03', audioInputPerMillion: '1.00', outputPerMillion: '2.50', maxOutputTokens: 65_536, contextWindow: 1_048_576 },
  'gemini-2.5-flash-lite': { inputPerMillion: '0.10', cachedInputPerMillion: '0.01', audioInputPerMillion: '0.30', outputPerMillion: '0.40', maxOutputTokens: 65_536, contextWindow: 1_048_576 },
  'gemini-2.0-flash': { inputPerMillion: '0.10', cachedInputPerMillion: '0.025', audioInputPerMillion: '0.70', outputPerMillion: '0.40', maxOutputTokens: 8_192, contextWindow: 1_048_576 },
  'gemini-2.0-flash-lite': { inputPerMillion: '0.075', outputPerMillion: '0.30', maxOutputTokens: 8_192, contextWindow: 1_048_576 },
  'text-embedding-004': { inputPerMillion: '0.00' },
  'mistral-large-latest': { inputPerMillion: '2.00', outputPerMillion: '6.00', maxOutputTokens: 32_768, contextWindow: 128_000 },
  'mistral-medium-latest': { inputPerMillion: '0.40', outputPerMillion: '2.00', maxOutputTokens: 32_768, contextWindow: 128_000 },
  'mistral-small-latest': { inputPerMillion: '0.10', outputPerMillion: '0.30', maxOutputTokens: 32_768, contextWindow: 128_000 },
  'codestral-latest': { inputPerMillion: '0.30', outputPerMillion: '0.90', maxOutputTokens: 32_768, contextWindow: 256_000 },
  'mistral-embed': { inputPerMillion: '0.10' },
  'mistral-ocr-latest': { perOcrPage: '0.001' },
  'command-a-03-2025': { inputPerMillion: '2.50', outputPerMillion: '10.00', maxOutputTokens: 8_000, contextWindow: 256_000 },
  'command-r-plus': { inputPerMillion: '2.50', outputPerMillion: '10.00', maxOutputTokens: 4_000, contextWindow: 128_000 },
  'command-r': { inputPerMillion: '0.15', outputPerMillion: '0.60', maxOutputTokens: 4_000, contextWindow: 128_000 },
  'embed-v4.0': { inputPerMillion: '0.12' },
  'embed-english-v3.0': { inputPerMillion: '0.10' },
  'embed-multilingual-v3.0': { inputPerMillion: '0.10' },
  'rerank-v3.5': { perSearchUnit: '0.002' },
  'rerank-english-v3.0': { perSearchUnit: '0.002' },
  'rerank-multilingual-v3.0': { perSearchUnit: '0.002' },
};
