import { GatewayError } from '../errors/gateway-error.js';
import { reportRejection } from '../lib/awaitable.js';
import { tapStream } from '../lib/tap-stream.js';
import { countPromptTokens } from '../metering/estimate-usage.js';
import type { TokenCounter } from '../metering/token-counter.js';
import { withAdmissionCheck } from '../pipeline/admission.js';
import type { GatewayCall, Outcome, Stage } from '../pipeline/stage.js';
import { usageTotals, type Usage } from '../protocol/usage.js';
import type { AuthContext } from '../tenancy/tenancy-types.js';
import type { CounterStore, HitResult, WindowLimit, WindowState } from './counter-store.js';
import { writeRateLimitHeaders } from './rate-limit-headers.js';
import { rateLimitsFor, type EffectiveLimits } from './rate-limits-for.js';

export interface RateLimitStageOptions {
  store: CounterStore;
  tokens: TokenCounter;
  now?: () => number;
  /** A store failure lets the call through (credits still guard the money) and is reported here. */
  onError?: (error: unknown) => void;
  /** The most output tokens per choice the catalog says a model can produce, if it says (its price's maxOutputTokens). */
  maxOutputTokensOf?: (model: string, orgId: string) => number | undefined;
}

const MINUTE_MS = 60_000;
const SECOND_MS = 1_000;
const TOKEN_OPERATIONS = new Set(['chat', 'completion', 'embedding']);

type Kind = 'rpm' | 'tps' | 'tpm';
const KINDS: readonly Kind[] = ['rpm', 'tps', 'tpm'];

/** Tokens counted at admission: the prompt plus the output the request asks for at most (if it says). */
function admissionTokens(call: GatewayCall, tokens: TokenCounter): number {
  if (!TOKEN_OPERATIONS.has(call.operation)) return 0;
  const body = call.request as { max_tokens?: unknown; max_completion_tokens?: unknown; n?: unknown };
  const requested = body.max_completion_tokens ?? body.max_tokens;
  const choices = typeof body.n === 'number' && body.n > 0 ? body.n : 1;
  const output = typeof requested === 'number' && requested > 0 ? requested * choices : 0;
  return countPromptTokens(call, tokens) + output;
}

const OUTPUT_PARAMS = ['max_tokens', 'max_completion_tokens'] as const;
const PROMPT_PARAMS: Record<string, string> = { chat: 'messages', completion: 'prompt', embedding: 'input' };

/**
 * 400 for max_tokens (or max_completion_tokens) above what the catalog says the model can
 * produce: the upstream would refuse it, and the TPM estimate would count tokens that can never come.
 */
function refuseOutputBeyondModel(call: GatewayCall, maxOutputTokensOf: RateLimitStageOptions['maxOutputTokensOf']): void {
  if (maxOutputTokensOf === undefined || (call.operation !== 'chat' && call.operation !== 'completion')) return;
  const body = call.request as Record<string, unknown>;
  for (const param of OUTPUT_PARAMS) {
    const requested = body[param];
    if (typeof requested !== 'number') continue;
    const most = maxOutputTokensOf(call.model, call.auth.org.id);
    if (most !== undefined && requested > most) {
      throw new GatewayError('invalid_request', `'${param}' is ${requested}, more than the model '${call.model}' can produce (at most ${most} output tokens).`, { param });
    }
  }
}

/**
 * 400, not 429, for a request that counts more tokens than its whole TPM limit: no window would
 * ever admit it, so a Retry-After would have the client retry forever. It names the parameter to
 * lower: the output it asks for, or else the prompt.
 */
function refuseBeyondTokenLimit(call: GatewayCall, estimate: number, limits: EffectiveLimits): void {
  const userLimit = limits.user && call.user ? limits.user.tpm : Infinity;
  const tpm = Math.min(limits.key.tpm, userLimit);
  if (estimate <= tpm) return;
  const body = call.request as Record<string, unknown>;
  const param = OUTPUT_PARAMS.findLast((name) => typeof body[name] === 'number') ?? PROMPT_PARAMS[call.operation];
  const whose = userLimit < limits.key.tpm ? 'for this user on this key' : 'of this key';
  throw new GatewayError(
    'invalid_request',
    `This request counts ${estimate} tokens (prompt plus max_tokens × n), more than the whole limit ${whose} (${tpm} tokens per minute): it can never be admitted. Lower '${param}'.`,
    { param, details: { limit_type: 'tpm' } },
  );
}

/** The counter keys of one prefix (a key, or a user on a key), in window order. */
interface WindowKeys {
  rpm: string;
  tps: string;
  tpm: string;
}

function windowKeys(prefix: string): WindowKeys {
  return { rpm: `rpm:${prefix}`, tps: `tps:${prefix}`, tpm: `tpm:${prefix}` };
}

function windowsFor(keys: WindowKeys, limits: EffectiveLimits['key'], tokens: number): WindowLimit[] {
  return [
    { key: keys.rpm, limit: limits.rpm, windowMs: MINUTE_MS, amount: 1 },
    { key: keys.tps, limit: limits.tps, windowMs: SECOND_MS, amount: 1 },
    { key: keys.tpm, limit: limits.tpm, windowMs: MINUTE_MS, amount: tokens },
  ];
}

function writeHeadersOf(headers: Record<string, string>, states: WindowState[]): void {
  writeRateLimitHeaders(headers, tightest(states, 'rpm'), longestWait(states, REQUEST_KINDS, 'resetMs'), tightest(states, 'tpm'), longestWait(states, TOKEN_KINDS, 'resetMs'));
}

function tightest(states: WindowState[], kind: Kind): WindowState {
  const offset = KINDS.indexOf(kind);
  let best = states[offset];
  for (let index = offset + 3; index < states.length; index += 3) if (states[index].remaining < best.remaining) best = states[index];
  return best;
}

/** The longest wait among the windows of the given kinds (key and user): when all of them would admit a request. */
function longestWait(states: WindowState[], kinds: readonly Kind[], field: 'resetMs' | 'retryAfterMs'): number {
  let longest = 0;
  for (let index = 0; index < states.length; index++) {
    if (kinds.includes(KINDS[index % 3]) && states[index][field] > longest) longest = states[index][field];
  }
  return longest;
}

const REQUEST_KINDS: readonly Kind[] = ['rpm', 'tps'];
const TOKEN_KINDS: readonly Kind[] = ['tpm'];

/**
 * Per-key RPM, TPM and TPS (requests per second, a burst ceiling: docs/rate-limits.md), with
 * per-`user` overrides. Refuses with 429 rate_limit_exceeded (RPM, TPS) or tpm_limit_exceeded,
 * with Retry-After; sets the x-ratelimit-* headers on every response. A request no window could
 * ever admit (more tokens than the whole TPM limit, or more output than the model can produce) is
 * a 400. TPM counts an estimate at admission and is corrected by the actual usage when the call ends.
 */
export function createRateLimitStage(options: RateLimitStageOptions): Stage {
  const { store, tokens } = options;
  const now = options.now ?? Date.now;
  const report = options.onError ?? (() => {});
  // Effective limits per AuthContext object: the key cache hands out the same object until the key changes.
  // With the key's counter names, made once too: new strings on every call would each be hashed anew by the counter map.
  const limitsByAuth = new WeakMap<AuthContext, EffectiveLimits & { keys: WindowKeys }>();

  function correct(call: GatewayCall, usage: Usage | undefined, windows: WindowLimit[], admittedAt: number, estimate: number): void {
    if (!usage || !TOKEN_OPERATIONS.has(call.operation)) return;
    const { promptTokens, completionTokens } = usageTotals(usage);
    const delta = promptTokens + completionTokens - estimate;
    if (delta === 0) return;
    for (let index = 2; index < windows.length; index += 3) {
      reportRejection(store.adjust(windows[index].key, MINUTE_MS, admittedAt, delta), report);
    }
  }

  /**
   * Writes the x-ratelimit-* headers, or refuses with 429 and Retry-After. Retry-After is when
   * every window would admit the call, and the reset header of the kind that refused it gives the
   * same moment to the millisecond (the other kind's reset, when it waits longer, says so too).
   */
  function admit(call: GatewayCall, result: HitResult, estimate: number): void {
    const { states } = result;
    if (result.allowed) {
      // Not needed until the answer is written: formatted in a microtask, which on the embedded
      // stores runs once the call's upstream request has been written (the pipeline gets there
      // without suspending), so the formatting fills the wait for the answer instead of delaying
      // the request. Any answer, or error answer, is written in a later microtask than this one
      // (queued first, it runs first), so the headers are always there.
      queueMicrotask(() => writeHeadersOf(call.record.headers, states));
      return;
    }
    const headers: Record<string, string> = {};
    writeHeadersOf(headers, states);
    const kind = KINDS[result.blockedIndex % 3];
    const state = states[result.blockedIndex];
    headers['retry-after'] = String(Math.max(1, Math.ceil(longestWait(states, KINDS, 'retryAfterMs') / 1000)));
    const scope = result.blockedIndex >= 3 ? 'for this user on this key' : 'for this key';
    const message =
      kind === 'tpm'
        ? `Tokens per minute limit reached ${scope} (${state.limit} TPM; this request counts ${estimate}). Retry after ${headers['retry-after']} s.`
        : `${kind === 'rpm' ? 'Requests per minute' : 'Requests per second'} limit reached ${scope} (${state.limit} ${kind.toUpperCase()}). Retry after ${headers['retry-after']} s.`;
    throw new GatewayError(kind === 'tpm' ? 'tpm_limit_exceeded' : 'rate_limit_exceeded', message, {
      headers,
      details: { limit_type: kind },
    });
  }

  return {
    name: 'rate-limit',
    async run(call, next) {
      let limits = limitsByAuth.get(call.auth);
      if (!limits) limitsByAuth.set(call.auth, (limits = { ...rateLimitsFor(call.auth), keys: windowKeys(call.auth.key.id) }));
      refuseOutputBeyondModel(call, options.maxOutputTokensOf);
      const estimate = admissionTokens(call, tokens);
      refuseBeyondTokenLimit(call, estimate, limits);
      const keyId = call.auth.key.id;
      const windows = windowsFor(limits.keys, limits.key, estimate);
      if (limits.user && call.user) windows.push(...windowsFor(windowKeys(`${keyId}:u:${encodeURIComponent(call.user)}`), limits.user, estimate));
      const admittedAt = now();
      let outcome: Outcome;
      const fromAllowance = store.hitFromAllowance?.(windows, admittedAt);
      if (fromAllowance !== undefined) {
        // Covered by the room this instance holds: allowed on the spot, nothing to join to admission.
        admit(call, fromAllowance, estimate);
        outcome = await next(call);
      } else if (store.hitNow !== undefined && call.admission === undefined) {
        // In-process counters with no earlier check pending: decided on the spot, which saves a
        // promise and a copy of the call (measurable on a CPU that idled between calls).
        admit(call, store.hitNow(windows, admittedAt), estimate);
        outcome = await next(call);
      } else {
        // Not awaited here: the verdict joins the call's admission, so the meter's credit hold is
        // sent alongside instead of one round trip later (pipeline/admission.ts). Behind an earlier
        // check still pending, a refusal waits for it, whose refusal wins.
        const verdict = store.hit(windows, admittedAt).then(
          (result) => admit(call, result, estimate),
          (error: unknown) => {
            // A store failure lets the call through: credits still guard the money.
            report(error);
          },
        );
        outcome = await next(withAdmissionCheck(call, verdict));
      }
      if (outcome.kind !== 'stream') {
        correct(call, outcome.usage ?? call.record.usage, windows, admittedAt, estimate);
        return outcome;
      }
      let streamed: Usage | undefined;
      const events = tapStream(outcome.events, {
        onItem(event) {
          if (event.usage) streamed = event.usage;
        },
        onEnd() {
          correct(call, streamed ?? call.record.usage, windows, admittedAt, estimate);
        },
      });
      return { kind: 'stream', events };
    },
  };
}
