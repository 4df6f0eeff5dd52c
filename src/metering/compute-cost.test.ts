import assert from 'node:assert/strict';
import { test } from 'node:test';
import { computeCost } from './compute-cost.js';
import { formatUsd, parseUsdNanos, parseUsdPico } from './format-usd.js';

test('formatUsd renders nine exact decimals', () => {
  assert.equal(formatUsd(0), '0.000000000');
  assert.equal(formatUsd(123450), '0.000123450');
  assert.equal(formatUsd(12_345_678_901), '12.345678901');
  assert.equal(formatUsd(-5), '-0.000000005');
  assert.equal(formatUsd(0.5), '0.000000001', 'a fraction of a nano-dollar is rounded half up');
});

test('formatUsd never throws on a stored amount: totals past 2^53 nanos are formatted exactly as held', () => {
  assert.equal(formatUsd(3e18), '3000000000.000000000');
  assert.equal(formatUsd(2 ** 53 + 2), '9007199.254740994');
  assert.equal(formatUsd(-(2 ** 60)), '-1152921504.606846976');
  assert.equal(formatUsd(123_456_789_012_345_678_901n), '123456789012.345678901');
  assert.equal(formatUsd(-1n), '-0.000000001');
  assert.equal(formatUsd(Number.NaN), 'NaN');
});

test('parseUsdNanos is exact and refuses sub-nano amounts', () => {
  assert.equal(parseUsdNanos('10.00'), 10_000_000_000);
  assert.equal(parseUsdNanos('0.000000001'), 1);
  assert.equal(parseUsdNanos('0.1000000000'), 100_000_000);
  assert.throws(() => parseUsdNanos('0.0000000001'));
  assert.throws(() => parseUsdNanos('-1'));
  assert.throws(() => parseUsdNanos('abc'));
  assert.equal(parseUsdPico('0.15'), 150_000_000_000n);
});

test('input and output tokens at per-million prices', () => {
  const cost = computeCost({ inputTokens: 1000, outputTokens: 500 }, { inputPerMillion: '2.50', outputPerMillion: '10.00' });
  // 1000 × 2.5/1e6 + 500 × 10/1e6 = 0.0025 + 0.005
  assert.equal(cost.costNanos, 7_500_000);
  assert.equal(cost.unpriced, false);
  assert.equal(cost.breakdown.length, 2);
});

test('cached and cache-write input use their own prices, falling back to input', () => {
  const price = { inputPerMillion: '3.00', cachedInputPerMillion: '0.30', cacheWriteInputPerMillion: '3.75', outputPerMillion: '15.00' };
  const cost = computeCost({ inputTokens: 100, cachedInputTokens: 10_000, cacheWriteInputTokens: 2000, outputTokens: 10 }, price);
  // 100×3 + 10000×0.3 + 2000×3.75 + 10×15 = 300 + 3000 + 7500 + 150 = 10950 micro-USD
  assert.equal(cost.costNanos, 10_950_000);
  const fallback = computeCost({ cachedInputTokens: 1000 }, { inputPerMillion: '1.00' });
  assert.equal(fallback.costNanos, 1_000_000);
  assert.equal(fallback.unpriced, false);
});

test('reasoning tokens priced once, at their price or the output price', () => {
  const withOwn = computeCost({ outputTokens: 100, reasoningTokens: 1000 }, { outputPerMillion: '4.40', reasoningPerMillion: '8.00' });
  assert.equal(withOwn.costNanos, 100 * 4400 + 1000 * 8000);
  const fallback = computeCost({ outputTokens: 100, reasoningTokens: 1000 }, { outputPerMillion: '4.40' });
  assert.equal(fallback.costNanos, 1100 * 4400);
});

test('audio and image input tokens fall back to the input price; audio output to output', () => {
  const cost = computeCost({ audioInputTokens: 100, imageInputTokens: 200, audioOutputTokens: 50 }, { inputPerMillion: '1.00', outputPerMillion: '2.00', audioInputPerMillion: '40.00' });
  assert.equal(cost.costNanos, 100 * 40_000 + 200 * 1000 + 50 * 2000);
});

test('images by size and quality, then size, then default', () => {
  const price = { perImage: { '1024x1024/high': '0.167', '1024x1536': '0.25', default: '0.02' } };
  const cost = computeCost(
    {
      images: [
        { size: '1024x1024', quality: 'high', count: 2 },
        { size: '1024x1536', quality: 'low', count: 1 },
        { size: '1536x1024', quality: 'auto', count: 3 },
      ],
    },
    price,
  );
  assert.equal(cost.costNanos, 2 * 167_000_000 + 250_000_000 + 3 * 20_000_000);
  assert.equal(computeCost({ images: [{ size: '1024x1024', quality: 'low', count: 1 }] }, {}).unpriced, true);
});

test('speech characters per million', () => {
  assert.equal(computeCost({ speechCharacters: 1234 }, { speechPerMillionCharacters: '15.00' }).costNanos, 18_510_000);
});

test('transcription seconds at a per-minute price, to the millisecond', () => {
  // 90 s at 0.006/min = 0.009 USD
  assert.equal(computeCost({ transcriptionSeconds: 90 }, { transcriptionPerMinute: '0.006' }).costNanos, 9_000_000);
  // 1.0005 s → 1001 ms (half up) → 1001 × 0.006 / 60000 = 0.0001001 USD
  assert.equal(computeCost({ transcriptionSeconds: 1.0005 }, { transcriptionPerMinute: '0.006' }).costNanos, 100_100);
  // 1 ms at 0.001/min = 1.666…e-8 USD → 16.67 nanos → 17
  assert.equal(computeCost({ transcriptionSeconds: 0.001 }, { transcriptionPerMinute: '0.001' }).costNanos, 17);
});

test('search units, OCR pages and video seconds per unit', () => {
  assert.equal(computeCost({ searchUnits: 3 }, { perSearchUnit: '0.002' }).costNanos, 6_000_000);
  assert.equal(computeCost({ ocrPages: 7 }, { perOcrPage: '0.001' }).costNanos, 7_000_000);
  assert.equal(computeCost({ videoSeconds: 8 }, { perVideoSecond: '0.10' }).costNanos, 800_000_000);
  assert.equal(computeCost({ videoSeconds: 2.5 }, { perVideoSecond: '0.30' }).costNanos, 750_000_000);
});

test('rounds once, half up, after summing exact parts', () => {
  // Each token costs 0.00015/1e6 USD = 0.15 nanos. Rounding per line would give 0 + 0; the exact sum 0.3 + 0.3 = 0.6 rounds to 1.
  const price = { inputPerMillion: '0.00015', outputPerMillion: '0.00015' };
  assert.equal(computeCost({ inputTokens: 2, outputTokens: 2 }, price).costNanos, 1);
  assert.equal(computeCost({ inputTokens: 3 }, price).costNanos, 0); // 0.45 → 0
  assert.equal(computeCost({ inputTokens: 10 }, { inputPerMillion: '0.00005' }).costNanos, 1); // 0.5 → 1 (half up)
  // Twelve-decimal prices stay exact: 1e9 tokens at 1e-12 USD per million tokens = 1e-9 USD.
  assert.equal(computeCost({ inputTokens: 1_000_000 }, { inputPerMillion: '0.000000000001' }).costNanos, 0);
  assert.equal(computeCost({ inputTokens: 1_000_000_000 }, { inputPerMillion: '0.000000000001' }).costNanos, 1);
  // Many small calls summed as integers equal the total of one large call when each is exact.
  assert.equal(computeCost({ inputTokens: 1_000_000 }, { inputPerMillion: '0.15' }).costNanos, 150_000_000);
});

test('a needed unit without any price marks the call unpriced; priced parts still count', () => {
  const cost = computeCost({ inputTokens: 1000, outputTokens: 1000 }, { inputPerMillion: '1.00' });
  assert.equal(cost.unpriced, true);
  assert.equal(cost.costNanos, 1_000_000);
  assert.equal(computeCost({ inputTokens: 5 }, undefined).unpriced, true);
  assert.equal(computeCost({}, undefined).unpriced, false);
});

test('a cost the upstream reported wins over our prices', () => {
  const cost = computeCost({ inputTokens: 1000, reportedCostNanos: 4242 }, { inputPerMillion: '100.00' });
  assert.equal(cost.costNanos, 4242);
  assert.equal(cost.reported, true);
});
