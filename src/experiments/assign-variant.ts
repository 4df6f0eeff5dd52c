import { createHash } from 'node:crypto';
import type { Experiment, Variant } from './experiment-types.js';

/**
 * Picks a variant by weight. With a `user`, the draw is SHA-256(experiment id + user) read as a
 * fraction, so the same user always lands in the same variant of the same experiment (and
 * independently across experiments); without one it is `random()`.
 */
export function assignVariant(experiment: Pick<Experiment, 'id' | 'variants'>, user: string | undefined, random: () => number = Math.random): Variant {
  const draw = user ? stickyFraction(experiment.id, user) : random();
  const total = experiment.variants.reduce((sum, variant) => sum + variant.weight, 0);
  let threshold = draw * total;
  for (const variant of experiment.variants) {
    threshold -= variant.weight;
    if (threshold < 0) return variant;
  }
  return experiment.variants[experiment.variants.length - 1];
}

/** A uniform fraction in [0, 1) from the first 48 bits of the hash (exact in a double). */
export function stickyFraction(experimentId: string, user: string): number {
  const digest = createHash('sha256').update(`${experimentId}\u0000${user}`).digest();
  return digest.readUIntBE(0, 6) / 2 ** 48;
}
