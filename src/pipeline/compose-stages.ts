import { publishCallStep } from '../observability/call-steps.js';
import type { Next, Stage } from './stage.js';

/**
 * Builds the pipeline once, at start-up, as a chain of functions: calling the result runs every
 * stage in order and then the terminal. Composing ahead of time keeps per-request closures out
 * of the hot path. Each stage's start is published as a call step (observability/call-steps.ts).
 */
export function composeStages(stages: readonly Stage[], terminal: Next): Next {
  let next = terminal;
  for (let index = stages.length - 1; index >= 0; index--) {
    const stage = stages[index];
    const downstream = next;
    const step = `stage:${stage.name}`;
    next = (call) => {
      publishCallStep(call.requestId, step);
      return stage.run(call, downstream);
    };
  }
  return next;
}
