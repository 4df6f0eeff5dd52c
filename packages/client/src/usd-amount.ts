/**
 * Exact conversions of the gateway's decimal USD strings (x-gw-request-cost, gw_cost_usd). gw
 * meters money as integer nano-USD, so a cost never has more than nine decimals; parsing works on
 * the digits as text and BigInt, because `Number('0.1') * 1e9` style float math is not exact.
 */

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/**
 * Parses a decimal USD string ("0.000123", "12", "1.5e-7") into integer nano-USD. Digits past the
 * ninth decimal are rounded half away from zero. Answers undefined for anything that is not a
 * plain decimal number.
 */
export function parseUsdNanos(text: string | null | undefined): number | undefined {
  if (text === null || text === undefined) return undefined;
  const match = DECIMAL.exec(text.trim());
  if (!match) return undefined;
  const [, sign = '', whole = '', fraction = '', exponentText] = match;
  if (whole === '' && fraction === '') return undefined;
  const exponent = exponentText === undefined ? 0 : Number(exponentText);
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > 400) return undefined;
  // All digits as one integer, with the decimal point `scale` places from the right.
  const digits = `${whole}${fraction}`.replace(/^0+(?=\d)/, '');
  const scale = fraction.length - exponent;
  const shift = 9 - scale;
  let nanos: bigint;
  if (shift >= 0) {
    nanos = BigInt(digits) * 10n ** BigInt(shift);
  } else {
    const divisor = 10n ** BigInt(-shift);
    const value = BigInt(digits);
    nanos = value / divisor;
    if ((value % divisor) * 2n >= divisor) nanos += 1n;
  }
  if (sign === '-') nanos = -nanos;
  const result = Number(nanos);
  return Number.isSafeInteger(result) ? result : undefined;
}

/** Integer nano-USD as an exact decimal string of micro-USD: 123456 → "123.456", 5 → "0.005". */
export function nanosToMicroUsd(nanos: number): string {
  return formatScaled(nanos, 3);
}

/** Integer nano-USD as an exact decimal string of USD: 123456 → "0.000123456". */
export function nanosToUsd(nanos: number): string {
  return formatScaled(nanos, 9);
}

function formatScaled(value: number, decimals: number): string {
  const negative = value < 0;
  const digits = BigInt(Math.abs(Math.trunc(value)))
    .toString()
    .padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}
