import { isGatewayError } from '../errors/gateway-error.js';
import { CallAbort } from '../lib/call-signal.js';
import type { Operation } from '../protocol/endpoints.js';
import { publishCallStep } from '../observability/call-steps.js';
import type { CallRecord, GatewayCall, Next, Outcome, Stage } from './stage.js';

/**
 * Admission: the checks that decide whether a call may go on at all (is the cached key still
 * current, is the call within its rate limits, can its credit cover it). With Postgres + Redis each
 * is a round trip to a shared store, so they are sent at once and the call does not wait for their
 * answers until something is about to act on it: the stages between only look at the call, and the
 * meter adds its credit hold as one more check (released again if admission fails). Every other
 * stage that would act (record an A/B outcome, call a guardrail, render a template, answer from the
 * cache) waits for admission first, and the gate right before the router decides what may happen
 * before it passed (docs/pipeline.md, "Admission").
 */

const ADMITTED: Promise<void> = Promise.resolve();

function ignore(): void {}

/**
 * The call with one more admission check. Checks added earlier win: their refusal is the one the
 * client sees when several fail (a stale key's restart before a rate-limit 429 before a 402).
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

/**
 * Whether a call's upstream request may leave while its admission is still being answered
 * (createAdmissionGateStage). `refused` is told of every refusal the gate saw.
 */
export interface UpstreamOverlap {
  allows(call: GatewayCall): boolean;
  refused(call: GatewayCall, refusal: unknown): void;
}

/** Operations whose upstream request may overlap admission: cheap to cancel a moment after it left. */
const OVERLAP_OPERATIONS: ReadonlySet<Operation> = new Set<Operation>(['chat', 'completion', 'embedding']);

export interface UpstreamOverlapOptions {
  /** How long a key's calls wait for admission before going upstream after a refusal (default 60 s). */
  cautionMs?: number;
  now?: () => number;
  /**
   * Whether the shared stores are reachable now (the Redis connection is up). While they are not,
   * every admission is about to be refused for it, and only more slowly than a request leaves:
   * no call overlaps, so none reaches the upstream during an outage.
   */
  storesReachable?: () => boolean;
}

/** At most this many keys are remembered as recently refused; expired ones are dropped first. */
const MAX_CAUTIONED = 10_000;

/**
 * The overlap policy: text calls (chat, completions, embeddings) overlap, except for a key that
 * was refused admission within the last `cautionMs` (rate limited, out of credit, or the shared
 * stores failing). So a key that runs into its limits (its own, or its team's or org's) costs the
 * upstream at most the requests already in flight when its first refusal came back, and then one
 * more per `cautionMs`, each cancelled as soon as the refusal arrives. The other keys of its org
 * keep overlapping until they are refused themselves. A key found stale (changed or revoked since it was
 * cached) is not a refusal of the key's use: the call starts over on a fresh lookup, and a revoked
 * key is refused there, before any stage runs.
 */
export function createUpstreamOverlap(options: UpstreamOverlapOptions = {}): UpstreamOverlap {
  const cautionMs = options.cautionMs ?? 60_000;
  const now = options.now ?? Date.now;
  const storesReachable = options.storesReachable ?? (() => true);
  /** Key id → the time until which its calls wait for admission. */
  const cautionUntil = new Map<string, number>();
  const cautioned = (id: string, at: number): boolean => {
    const until = cautionUntil.get(id);
    if (until === undefined) return false;
    if (until > at) return true;
    cautionUntil.delete(id);
    return false;
  };
  const caution = (id: string, until: number) => {
    if (cautionUntil.size >= MAX_CAUTIONED && !cautionUntil.has(id)) {
      const at = now();
      for (const [each, eachUntil] of cautionUntil) if (eachUntil <= at) cautionUntil.delete(each);
      // Still full of live entries: forget the oldest (a forgotten key only overlaps once more).
      if (cautionUntil.size >= MAX_CAUTIONED) cautionUntil.delete(cautionUntil.keys().next().value as string);
    }
    cautionUntil.delete(id);
    cautionUntil.set(id, until);
  };
  return {
    allows(call) {
      if (!OVERLAP_OPERATIONS.has(call.operation) || !storesReachable()) return false;
      if (cautionUntil.size === 0) return true;
      const at = now();
      return !cautioned(call.auth.key.id, at);
    },
    refused(call, refusal) {
      if (!isGatewayError(refusal)) return;
      caution(call.auth.key.id, now() + cautionMs);
    },
  };
}

/** The reason an overlapped upstream request is cancelled with: not a GatewayError, so the router treats it as a call nobody waits for. */
class AdmissionRefused extends Error {
  constructor() {
    super('admission was refused while the upstream request was in flight');
    this.name = 'AdmissionRefused';
  }
}

/**
 * Closes an answer nobody will read. A stream is read once and then closed, so every layer's
 * cleanup runs (the attempt's timers, the deployment's in-flight count): closing an iterator that
 * never started would skip them. Its upstream request was already cut by the abort.
 */
async function discard(outcome: Outcome): Promise<void> {
  if (outcome.kind !== 'stream') return;
  const iterator = outcome.events[Symbol.asyncIterator]();
  try {
    const first = await iterator.next();
    if (!first.done) await iterator.return?.();
  } catch {
    // Failing because it was cut: nothing left to close.
  }
}

/** What the call's record held before the router wrote to it (deployment, attempts, x-gw-route). */
function snapshotRecord(record: CallRecord): CallRecord {
  return { ...record, headers: { ...record.headers } };
}

function restoreRecord(record: CallRecord, snapshot: CallRecord): void {
  const headers = record.headers;
  for (const name of Object.keys(headers)) delete headers[name];
  Object.assign(headers, snapshot.headers);
  for (const field of Object.keys(record) as Array<keyof CallRecord>) if (field !== 'headers') delete record[field];
  Object.assign(record, snapshot, { headers });
}

/**
 * Sends the call on while its admission is answered, and hands its answer back only once admission
 * passed. On a refusal the upstream request is cancelled, its answer (if any) discarded, what the
 * router wrote on the call's record undone, and the refusal answered: the client and the request
 * log see exactly what they would have had the call waited.
 */
function overlapAdmission(call: GatewayCall, admission: Promise<void>, next: Next, overlap: UpstreamOverlap): Promise<Outcome> {
  const upstream = new CallAbort();
  const clientSignal = call.signal;
  if (clientSignal.aborted) upstream.abort(clientSignal.reason);
  else clientSignal.addEventListener('abort', () => upstream.abort(clientSignal.reason), { once: true });
  const before = snapshotRecord(call.record);
  let answer: Promise<Outcome>;
  try {
    answer = next({ ...call, signal: upstream.signal });
  } catch (error) {
    answer = Promise.reject(error);
  }
  // Looked at only once admission answered: not an unhandled rejection meanwhile.
  answer.catch(ignore);
  return admission.then(
    () => {
      publishCallStep(call.requestId, 'admitted');
      return answer;
    },
    async (refusal: unknown) => {
      overlap.refused(call, refusal);
      upstream.abort(new AdmissionRefused());
      // The router settles promptly once cut; waiting for it means nothing writes to the record after it is restored.
      await answer.then(discard, ignore);
      restoreRecord(call.record, before);
      throw refusal;
    },
  );
}

/**
 * The last stage of every pipeline: nothing reaches the client, and nothing is sent upstream unless
 * `overlap` allows it, before admission passed. With `overlap`, an allowed call's upstream request
 * leaves at once and its answer waits for admission (overlapAdmission); the others wait here.
 */
export function createAdmissionGateStage(options: { overlap?: UpstreamOverlap } = {}): Stage {
  const { overlap } = options;
  return {
    name: 'admission-gate',
    run(call, next) {
      const admission = call.admission;
      if (admission === undefined) {
        publishCallStep(call.requestId, 'admitted');
        return next(call);
      }
      if (overlap?.allows(call)) return overlapAdmission(call, admission, next, overlap);
      return admission.then(
        () => {
          publishCallStep(call.requestId, 'admitted');
          return next(call);
        },
        (refusal: unknown) => {
          overlap?.refused(call, refusal);
          throw refusal;
        },
      );
    },
  };
}
