import { GatewayError, isGatewayError } from '../errors/gateway-error.js';
import { isPromise, type Awaitable } from '../lib/awaitable.js';
import { publishCallStep } from '../observability/call-steps.js';
import type { GatewayCall, Outcome, StreamEvent } from '../pipeline/stage.js';
import type { DeploymentTarget, Provider } from '../providers/provider.js';
import { countsAgainstCircuit, isDeploymentFault, toAttemptError } from './attempt-error.js';
import { capTimeouts, createAttemptSignal, untilAborted, type AttemptSignal } from './attempt-signal.js';
import type { Deployment } from './catalog-types.js';
import type { CircuitBreaker } from './circuit-breaker.js';
import type { CallSample, HealthStore } from './health-store.js';
import type { RouterClock } from './router-clock.js';

export interface AttemptContext {
  breaker: CircuitBreaker;
  health: HealthStore;
  clock: RouterClock;
  logger?: { warn(object: Record<string, unknown>, message: string): void };
  /** Called once when a stream that already reached the client fails (it cannot be retried). */
  onStreamFailure(call: GatewayCall, error: GatewayError): void;
}

export interface AttemptInput {
  /** The call as the provider gets it: gw_* stripped, `model` the id being served. */
  call: GatewayCall;
  deployment: Deployment;
  provider: Provider;
  target: DeploymentTarget;
  /** Time the request has left (its cap minus what has passed). */
  remainingMs: number;
  /**
   * Whether a failure of this attempt is recorded against the circuit. The router sets it for a
   * call's first attempt on a deployment and for a half-open probe, so one call's retries of the
   * same deployment count once: `consecutive_failures` then counts failing calls, not attempts.
   */
  countsFailure: boolean;
}

/**
 * One call to one deployment. Success means a body, or for a stream its first event: the first
 * event is pulled here, so a stream that fails before it is an ordinary failed attempt the router
 * may retry. What follows it is handed back as a wrapped iterable that ends with a thrown
 * GatewayError on failure (the SSE writer turns that into a final error event, never [DONE]).
 * Circuit and health bookkeeping happen here, once per attempt.
 */
export async function runAttempt(context: AttemptContext, input: AttemptInput): Promise<Outcome> {
  const { call, deployment, provider } = input;
  publishCallStep(call.requestId, 'attempt');
  const timeouts = capTimeouts(input.target.timeouts, input.remainingMs);
  const attemptSignal = createAttemptSignal(call.signal, timeouts, call.stream);
  const settled = provider.honoursAbortSignal ? settledAsIs : untilAborted;
  const startedAt = context.clock.now();
  recordHealth(context, deployment.id, 'begin', null);
  let iterator: AsyncIterator<StreamEvent> | undefined;
  try {
    const outcome = await settled(
      provider.invoke({ call, target: { ...input.target, timeouts }, signal: attemptSignal.signal }),
      attemptSignal.signal,
    );
    if (outcome.kind !== 'stream') {
      attemptSignal.dispose();
      const settling = settle(context, input, { ok: true, latencyMs: context.clock.now() - startedAt }, null);
      if (isPromise(settling)) await settling;
      return outcome;
    }
    iterator = outcome.events[Symbol.asyncIterator]();
    const first = await settled(iterator.next(), attemptSignal.signal);
    if (first.done) {
      throw new GatewayError('upstream_bad_response', 'The provider ended the stream without any event.', {
        provider: deployment.provider,
      });
    }
    attemptSignal.firstByteArrived();
    const timeToFirstTokenMs = context.clock.now() - startedAt;
    return {
      kind: 'stream',
      events: continueStream(context, input, { first: first.value, iterator, attemptSignal, startedAt, timeToFirstTokenMs, settled }),
    };
  } catch (error) {
    attemptSignal.dispose();
    closeQuietly(iterator);
    if (call.signal.aborted) {
      await settle(context, input, null, null);
      throw cancelledError(call);
    }
    const failure = toAttemptError(error, deployment, attemptSignal.timedOut());
    await settle(context, input, { ok: !isDeploymentFault(failure), latencyMs: context.clock.now() - startedAt }, failure);
    throw failure;
  }
}

interface StreamState {
  first: StreamEvent;
  iterator: AsyncIterator<StreamEvent>;
  attemptSignal: AttemptSignal;
  startedAt: number;
  timeToFirstTokenMs: number;
  settled: typeof untilAborted;
}

/** For providers that honour the signal themselves: their promises already settle on abort. */
function settledAsIs<T>(promise: Promise<T>): Promise<T> {
  return promise;
}

async function* continueStream(context: AttemptContext, input: AttemptInput, state: StreamState): AsyncGenerator<StreamEvent> {
  const { call, deployment } = input;
  let completed = false;
  let failure: GatewayError | undefined;
  let cancelled = false;
  try {
    yield state.first;
    for (;;) {
      const next = await state.settled(state.iterator.next(), state.attemptSignal.signal);
      if (next.done) break;
      yield next.value;
    }
    completed = true;
  } catch (error) {
    if (call.signal.aborted) {
      cancelled = true;
      throw cancelledError(call);
    }
    failure = toAttemptError(error, deployment, state.attemptSignal.timedOut());
    throw failure;
  } finally {
    state.attemptSignal.dispose();
    if (!completed) closeQuietly(state.iterator);
    const latencyMs = context.clock.now() - state.startedAt;
    if (completed) {
      await settle(context, input, { ok: true, latencyMs, timeToFirstTokenMs: state.timeToFirstTokenMs }, null);
    } else if (failure) {
      await settle(context, input, { ok: !isDeploymentFault(failure), latencyMs }, failure);
      context.onStreamFailure(call, failure);
    } else {
      // The consumer stopped early (client left, or a stage ended the stream): no verdict on the deployment.
      await settle(context, input, null, null);
      if (cancelled && isGatewayError(call.signal.reason)) context.onStreamFailure(call, call.signal.reason);
    }
  }
}

/**
 * Health sample plus circuit verdict. An answer that is not the deployment's fault (a bad request, a
 * rate limit) still proves it is up. A provider that keeps no circuit (in process) gets no verdict,
 * and neither does a retry whose call already counted a failure against this deployment.
 */
function settle(
  context: AttemptContext,
  input: AttemptInput,
  sample: CallSample | null,
  failure: GatewayError | null,
): Awaitable<void> {
  const { deployment } = input;
  recordHealth(context, deployment.id, 'end', sample);
  if (sample === null || input.provider.inProcess) return;
  if (failure === null || !countsAgainstCircuit(failure)) return context.breaker.success(deployment);
  if (input.countsFailure) return context.breaker.failure(deployment, failure.code);
}

/**
 * The error for a call whose own signal aborted: the request's time cap (the edge aborts with a
 * GatewayError) or the client leaving (nobody reads the answer; the log gets a timeout code).
 */
export function cancelledError(call: GatewayCall): GatewayError {
  const reason: unknown = call.signal.reason;
  if (isGatewayError(reason)) return reason;
  return new GatewayError('upstream_timeout', 'The request was cancelled before the provider finished answering.', {
    cause: reason,
  });
}

function closeQuietly(iterator: AsyncIterator<StreamEvent> | undefined): void {
  try {
    // Not awaited: a generator still busy in next() runs return() only after it, which may be never.
    void iterator?.return?.()?.catch(() => {});
  } catch {
    // A provider iterator whose return() throws has nothing left to close.
  }
}

/** An attempt's start or end in the health store, with no closure per call. Health statistics are advisory: a store that throws is logged, and the call goes on. */
function recordHealth(context: AttemptContext, deploymentId: string, moment: 'begin' | 'end', sample: CallSample | null): void {
  try {
    if (moment === 'begin') context.health.begin(deploymentId);
    else context.health.end(deploymentId, sample);
  } catch (error) {
    context.logger?.warn({ error: (error as Error).message }, 'deployment health store unavailable');
  }
}
