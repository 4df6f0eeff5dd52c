import { channel } from 'node:diagnostics_channel';

/**
 * The steps of an inference call on the Node diagnostics channel `gw:call:step`, for whatever
 * wants to see where a call's time goes without tracing it (an APM agent, or
 * `node bench/call-timeline.mjs`). Each message is a `CallStep`:
 *
 * - `stage:<name>` as a pipeline stage starts (key-confirmation, rate-limit, meter, cache…);
 * - `admitted` once the call's admission checks (key still current, rate limits, credit hold)
 *   have passed, right before the router;
 * - `attempt` as an upstream attempt starts (once per attempt: retries and fallbacks repeat it);
 * - for an upstream answer read whole (not a stream): `answer read` once its body is all here,
 *   `answer translated` once the provider has made the call's outcome of it (usage read, `model` set);
 * - for every answer that is not a stream (upstream, local model, cache hit): `answer writing` as
 *   the pipeline's outcome reaches the HTTP handler, and `answer handed to the socket` once the
 *   handler's write has returned (on a kept connection that write usually reaches the kernel at
 *   once, so the span before it holds the send itself).
 *
 * Together with `gw:http:request:start` (calls gw's HTTP edge serves; src/http/edge/http-edge.ts), Node's
 * own channels (`http.server.request.start`) and undici's
 * (`undici:client:sendHeaders`, `undici:request:headers`…) they give a call's timeline. Nothing is
 * built or published while nobody subscribes: a step then costs one property read.
 */
export const CALL_STEP_CHANNEL = 'gw:call:step';

export interface CallStep {
  requestId: string;
  step: string;
  /** performance.now() when the step began. */
  at: number;
}

const callSteps = channel(CALL_STEP_CHANNEL);

export function publishCallStep(requestId: string, step: string): void {
  if (callSteps.hasSubscribers) callSteps.publish({ requestId, step, at: performance.now() } satisfies CallStep);
}
