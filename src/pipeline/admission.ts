import { publishCallStep } from '../observability/call-steps.js';
import type { GatewayCall, Stage } from './stage.js';

/**
 * Admission: the checks that decide whether a call may go on at all (is the cached key still
 * current, is the call within its rate limits). With Postgres + Redis each is a round trip to a
 * shared store, so they are sent at once and the call does not wait for their answers until
 * something is about to act on it: the stages between only look at the call, and the meter sends
 * its credit hold alongside (released again if admission fails). Every other stage that would act
 * (record an A/B outcome, call a guardrail, render a template, answer from the cache) waits for
 * admission first, and the gate right before the router makes sure nothing goes upstream before it
 * passed (docs/pipeline.md, "Admission").
 */

const ADMITTED: Promise<void> = Promise.resolve();

function ignore(): void {}

/**
 * The call with one more admission check. Checks added earlier win: their refusal is the one the
 * client sees when several fail (a stale key's restart before a rate-limit 429).
 */
export function withAdmissionCheck(call: GatewayCall, check: Promise<void>): GatewayCall {
  const previous = call.admission;
  // A stage may fail on its own before anything awaits the admission, and when `previous` fails
  // first `check` is never looked at: neither is an unhandled rejection. Awaiting still rejects.
  check.catch(ignore);
  if (previous === undefined) return { ...call, admission: check };
  const admission = previous.then(() => check);
  admission.catch(ignore);
  return { ...call, admission };
}

/** Resolves once every admission check passed; rejects with the refusal otherwise. */
export function admitted(call: GatewayCall): Promise<void> {
  return call.admission ?? ADMITTED;
}

/** The last stage of every pipeline: nothing reaches the router before admission passed. */
export function createAdmissionGateStage(): Stage {
  return {
    name: 'admission-gate',
    run(call, next) {
      if (call.admission === undefined) {
        publishCallStep(call.requestId, 'admitted');
        return next(call);
      }
      return call.admission.then(() => {
        publishCallStep(call.requestId, 'admitted');
        return next(call);
      });
    },
  };
}
