import type { Usage } from '../../protocol/usage.js';

/**
 * The most of any one usage class (tokens of a kind, characters, images, pages, search units,
 * seconds) a single call is believed to consume: 1e9, about a hundred times the largest context
 * window on sale. Beyond it a number is a broken upstream, not a bill: priced, it could overflow
 * the exact range of money counters (docs/money.md, "Usage from upstreams").
 */
export const MAX_UPSTREAM_UNITS_PER_CALL = 1_000_000_000;

/** Classes counted in whole units: a fraction is rounded up, as a provider bills a started unit. */
const WHOLE_UNIT_FIELDS = [
  'inputTokens',
  'cachedInputTokens',
  'cacheWriteInputTokens',
  'outputTokens',
  'reasoningTokens',
  'audioInputTokens',
  'audioOutputTokens',
  'imageInputTokens',
  'speechCharacters',
  'searchUnits',
  'ocrPages',
] as const satisfies ReadonlyArray<keyof Usage>;

/** Durations are priced to the millisecond (compute-cost.ts), so their fractions are kept. */
const SECONDS_FIELDS = ['transcriptionSeconds', 'videoSeconds'] as const satisfies ReadonlyArray<keyof Usage>;

/** Why a number cannot be a usage count; undefined when it can. */
function unitProblem(value: unknown): string | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value)) return `is not a finite number (${String(value)})`;
  if (value < 0) return `is negative (${value})`;
  if (Math.ceil(value) > MAX_UPSTREAM_UNITS_PER_CALL) return `is above ${MAX_UPSTREAM_UNITS_PER_CALL} (${value})`;
  return undefined;
}

/**
 * The usage an upstream reported, as gw bills it: every count a non-negative number within
 * MAX_UPSTREAM_UNITS_PER_CALL, whole-unit counts rounded up to an integer. A usage with any
 * number that cannot be a count is rejected whole (`onRejected` says why) and the call is treated
 * as one whose upstream reported no usage: metering counts it itself and marks it estimated.
 * Returns the same object when nothing needed rounding, so a well-formed usage costs no copy.
 */
export function acceptUpstreamUsage(usage: Usage | undefined, onRejected: (problem: string) => void): Usage | undefined {
  if (usage === undefined || usage === null) return undefined;
  let accepted = usage;
  for (const field of WHOLE_UNIT_FIELDS) {
    const value = usage[field];
    if (value === undefined || value === null) continue;
    const problem = unitProblem(value);
    if (problem !== undefined) return reject(onRejected, `${field} ${problem}`);
    if (!Number.isInteger(value)) {
      if (accepted === usage) accepted = { ...usage };
      accepted[field] = Math.ceil(value);
    }
  }
  for (const field of SECONDS_FIELDS) {
    const value = usage[field];
    if (value === undefined || value === null) continue;
    const problem = unitProblem(value);
    if (problem !== undefined) return reject(onRejected, `${field} ${problem}`);
  }
  if (usage.images) {
    for (const image of usage.images) {
      const problem = unitProblem(image.count);
      if (problem !== undefined) return reject(onRejected, `images.count ${problem}`);
    }
    if (usage.images.some((image) => !Number.isInteger(image.count))) {
      if (accepted === usage) accepted = { ...usage };
      accepted.images = usage.images.map((image) => ({ ...image, count: Math.ceil(image.count) }));
    }
  }
  const reported = usage.reportedCostNanos;
  if (reported !== undefined && reported !== null && !(Number.isSafeInteger(reported) && reported >= 0)) {
    return reject(onRejected, `reportedCostNanos is not a non-negative safe integer (${String(reported)})`);
  }
  return accepted;
}

function reject(onRejected: (problem: string) => void, problem: string): undefined {
  onRejected(problem);
  return undefined;
}
