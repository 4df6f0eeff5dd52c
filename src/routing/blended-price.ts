import type { ModelPrice } from '../metering/model-price.js';

/**
 * A price to rank deployments by for lowest-cost routing: input plus output per million tokens, in
 * pico-USD (integers, exact for the 12 decimals a price may have). Only compared, never billed.
 * Undefined when the price has no token rates (the router then ranks it last).
 */
export function blendedPrice(price: ModelPrice | null | undefined): number | undefined {
  if (!price || (price.inputPerMillion === undefined && price.outputPerMillion === undefined)) return undefined;
  return picoUsd(price.inputPerMillion) + picoUsd(price.outputPerMillion);
}

function picoUsd(amount: string | undefined): number {
  if (amount === undefined) return 0;
  const [whole = '0', fraction = ''] = amount.split('.');
  return Number(whole) * 1e12 + Number(fraction.padEnd(12, '0').slice(0, 12));
}
