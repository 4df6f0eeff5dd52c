/**
 * The bounds that keep every money counter exact (docs/money.md, "Units and exactness"). Counters
 * are integer nano-USD in JavaScript numbers, exact up to Number.MAX_SAFE_INTEGER.
 */

const NANOS_PER_USD = 1_000_000_000;

/** The largest amount held exactly: 9,007,199,254,740,991 nano-USD, about 9,007,199.25 USD. */
export const MAX_EXACT_NANOS = Number.MAX_SAFE_INTEGER;

/** The most one top-up may add: 1,000,000 USD. */
export const MAX_TOP_UP_NANOS = 1_000_000 * NANOS_PER_USD;

/**
 * The most an org's credited total (the sum of all its top-ups, which never resets) may reach:
 * 9,000,000 USD, within MAX_EXACT_NANOS with room for the spend overrun of calls in flight.
 */
export const MAX_CREDITED_NANOS = 9_000_000 * NANOS_PER_USD;
