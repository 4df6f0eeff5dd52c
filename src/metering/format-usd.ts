/**
 * Exact conversions between USD decimal strings and the integers gw counts money in. Money is held
 * as integer nano-USD (1e-9 USD) in plain JS numbers: exact up to Number.MAX_SAFE_INTEGER nanos,
 * about 9 million USD per counter (docs/money.md). Prices are parsed to BigInt pico-USD (1e-12) so
 * that price × quantity never rounds before the single final rounding in computeCost.
 */

const NANOS_PER_USD = 1_000_000_000;
const USD_PATTERN = /^(\d+)(?:\.(\d{1,12}))?$/;

/**
 * `123450` → `"0.000123450"`: the exact amount, always 9 decimals (x-gw-request-cost, history,
 * balances). Never throws: it also formats what is already stored, and a total past the exact
 * range of a number (a bad row, a sum of years) must still be readable. Integers of any size are
 * formatted exactly as the value holds them (BigInt); a fraction of a nano-dollar is rounded half
 * up; a value that is no number at all is shown as it is ("NaN").
 */
export function formatUsd(nanos: number | bigint): string {
  if (typeof nanos === 'bigint') return formatBigNanos(nanos);
  if (!Number.isSafeInteger(nanos)) {
    if (!Number.isFinite(nanos)) return String(nanos);
    return formatBigNanos(BigInt(Math.round(nanos)));
  }
  const negative = nanos < 0;
  const magnitude = negative ? -nanos : nanos;
  const whole = Math.floor(magnitude / NANOS_PER_USD);
  const fraction = String(magnitude - whole * NANOS_PER_USD).padStart(9, '0');
  return `${negative ? '-' : ''}${whole}.${fraction}`;
}

function formatBigNanos(nanos: bigint): string {
  const negative = nanos < 0n;
  const magnitude = negative ? -nanos : nanos;
  const fraction = String(magnitude % 1_000_000_000n).padStart(9, '0');
  return `${negative ? '-' : ''}${magnitude / 1_000_000_000n}.${fraction}`;
}

/** `"10.00"` → 10_000_000_000. Refuses amounts finer than a nano-dollar instead of rounding them. */
export function parseUsdNanos(amount: string): number {
  const match = USD_PATTERN.exec(amount.trim());
  if (!match) throw new RangeError(`not a USD decimal amount: "${amount}"`);
  const fraction = match[2] ?? '';
  if (fraction.length > 9 && /[^0]/.test(fraction.slice(9))) {
    throw new RangeError(`USD amount finer than 1e-9: "${amount}"`);
  }
  const nanos = BigInt(match[1]) * 1_000_000_000n + BigInt(fraction.slice(0, 9).padEnd(9, '0'));
  if (nanos > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`USD amount too large: "${amount}"`);
  return Number(nanos);
}

/** `"0.15"` → 150_000_000_000n pico-USD (prices carry at most 12 decimals, see model-price.ts). */
export function parseUsdPico(amount: string): bigint {
  // Prices are a handful of distinct strings, parsed on every metered call: remember them.
  const known = PICO_CACHE.get(amount);
  if (known !== undefined) return known;
  const parsed = parseUsdPicoUncached(amount);
  if (PICO_CACHE.size < 10_000) PICO_CACHE.set(amount, parsed);
  return parsed;
}

const PICO_CACHE = new Map<string, bigint>();

function parseUsdPicoUncached(amount: string): bigint {
  const match = USD_PATTERN.exec(amount);
  if (!match) throw new RangeError(`not a USD decimal amount: "${amount}"`);
  return BigInt(match[1]) * 1_000_000_000_000n + BigInt((match[2] ?? '').padEnd(12, '0'));
}
