import { GatewayError, isGatewayError } from '../errors/gateway-error.js';
import type { EventBus } from '../lib/event-bus.js';
import { isPromise, reportRejection, type Awaitable } from '../lib/awaitable.js';
import { CallAbort } from '../lib/call-signal.js';
import { admitted, withAdmissionCheck } from '../pipeline/admission.js';
import type { GatewayCall, Next, Outcome, Stage } from '../pipeline/stage.js';
import type { Usage } from '../protocol/usage.js';
import type { Deployment } from '../routing/catalog-types.js';
import { createThresholdNotifier } from './budget-thresholds.js';
import { computeCost, type Cost } from './compute-cost.js';
import { countPromptTokens, DEFAULT_ESTIMATE_LIMITS, estimateMaxUsage, type EstimateLimits } from './estimate-usage.js';
import { formatUsd } from './format-usd.js';
import { MAX_EXACT_NANOS } from './money-limits.js';
import { MAX_UPSTREAM_UNITS_PER_CALL } from '../providers/http/upstream-usage.js';
import { meterStream } from './metered-stream.js';
import type { PricingCatalog } from './pricing-catalog.js';
import { spendAccountsFor } from './spend-accounts.js';
import type { ReserveResult, SpendGate, SpendAccount } from './spend-gate.js';
import type { SpendEntry, SpendLedger } from './spend-ledger.js';
import { createPeriodClock } from './spend-periods.js';
import type { SpendSeeder } from './spend-seeder.js';
import type { DeferredGateWrite } from './settlement-retry.js';
import type { TokenCounter } from './token-counter.js';
import { collectProducedText, type ProducedMessageFields } from './produced-text.js';

export interface MeterStageOptions {
  pricing: PricingCatalog;
  gate: SpendGate;
  seeder: SpendSeeder;
  ledger: SpendLedger;
  events: EventBus;
  tokens: TokenCounter;
  /** The deployments behind a public model id: the reservation takes the dearest of their prices. */
  deploymentsOf?: (modelId: string) => readonly Deployment[] | undefined;
  /** The deployment that served a call (call.record.deploymentId): the settlement uses its price. */
  findDeployment?: (deploymentId: string) => Deployment | undefined;
  /** Charge calls to the org's credit balance (default true); budgets apply either way. */
  credits?: boolean;
  limits?: Partial<EstimateLimits>;
  /** Holds older than this are released by the gate's sweeper; keep it above the longest call. */
  reservationTtlMs?: number;
  /** How long an abandoned stream is read on to learn its usage. */
  streamDrainTimeoutMs?: number;
  now?: () => number;
  onError?: (error: unknown, context: string) => void;
  /** Where a settlement or release that failed (store away) goes to be replayed later (settlement-retry.ts). */
  deferGateWrite?: (write: DeferredGateWrite) => void;
}

const FREE: Cost = { costNanos: 0, unpriced: false, reported: false, breakdown: [] };

const ACCOUNT_NAMES: Record<SpendAccount['kind'], string> = {
  credit: "the org's credit balance",
  org: "the org's budget",
  team: "the team's budget",
  key: "the key's budget",
  user: 'the budget for this user on the key',
};

/**
 * Credits and budgets around one call: estimate the most it can cost, hold that on every account
 * that applies (402 if one cannot cover it, 503 if the store is down), run the call, settle the
 * actual cost from the reported usage and release the rest, record it in the spend ledger. See
 * docs/money.md. Moderations are not metered.
 */
export function createMeterStage(options: MeterStageOptions): Stage {
  const { pricing, gate, seeder, ledger, tokens } = options;
  const now = options.now ?? Date.now;
  const limits: EstimateLimits = { ...DEFAULT_ESTIMATE_LIMITS, ...options.limits };
  const credits = options.credits ?? true;
  const ttlMs = options.reservationTtlMs ?? 15 * 60_000;
  const drainTimeoutMs = options.streamDrainTimeoutMs ?? 5 * 60_000;
  /**
   * The time a call's accounts were chosen (their budget periods), read once per call so that its
   * ledger row is dated by the same clock reading (record.spendAccountsChosenAt).
   */
  let accountsChosenAt = 0;
  const windowOf = createPeriodClock(() => accountsChosenAt);
  const thresholds = createThresholdNotifier({ gate, events: options.events, now });
  const report = options.onError ?? (() => {});
  /** Each running call's hold (by its record, shared by every copy of the call): what a cost is compared with, and charged when it cannot be computed. */
  const heldNanos = new WeakMap<GatewayCall['record'], number>();

  /** The estimate priced at the dearest deployment that may serve the call; unpriced if any of them is. */
  function reservationCost(call: GatewayCall): Cost {
    const orgId = call.auth.org.id;
    const base = pricing.priceFor(call.model, orgId);
    const usage = estimateMaxUsage(call, base, tokens, limits);
    let cost: Cost | undefined;
    let baseCounted = false;
    for (const deployment of options.deploymentsOf?.(call.model) ?? []) {
      if (!deployment.enabled) continue;
      if (!deployment.pricing) {
        if (baseCounted) continue;
        baseCounted = true;
      }
      const candidate = computeCost(usage, deployment.pricing ? pricing.priceFor(call.model, orgId, deployment) : base);
      if (!cost) cost = candidate;
      else if (candidate.costNanos > cost.costNanos) cost = { ...candidate, unpriced: cost.unpriced || candidate.unpriced };
      else if (candidate.unpriced) cost = { ...cost, unpriced: true };
    }
    return cost ?? computeCost(usage, base);
  }

  /**
   * The cost of the usage at the serving deployment's price. Never throws: the call has run and
   * gw has paid for it, so a cost that cannot be computed, or lies past the exact range, is logged
   * and the call is charged its hold instead (docs/money.md, "Settlement").
   */
  function settlementCost(call: GatewayCall, usage: Usage): Cost {
    try {
      const deploymentId = call.record.deploymentId;
      const deployment = deploymentId ? options.findDeployment?.(deploymentId) : undefined;
      const cost = computeCost(usage, pricing.priceFor(deployment?.modelId ?? call.model, call.auth.org.id, deployment));
      if (!Number.isSafeInteger(cost.costNanos) || cost.costNanos < 0) throw new RangeError(`cost outside the exact range: ${cost.costNanos} nano-USD`);
      return cost;
    } catch (error) {
      report(error, 'cost computation failed; the call is charged its hold');
      return { costNanos: heldNanos.get(call.record) ?? 0, unpriced: false, reported: false, breakdown: [], fromHold: true };
    }
  }

  /** Usage for an upstream that reported none: prompt + produced text counted here, or the request's own units. */
  function fallbackUsage(call: GatewayCall, producedText: string): Usage {
    if (call.operation === 'chat' || call.operation === 'completion' || call.operation === 'embedding') {
      return { inputTokens: countPromptTokens(call, tokens), outputTokens: tokens.count(producedText) };
    }
    return estimateMaxUsage(call, pricing.priceFor(call.model, call.auth.org.id), tokens, limits);
  }

  /**
   * Charges the call: the ledger row is queued and the counter write is sent, but the answer does
   * not wait for the counter's reply (with Redis that is a round trip on every call). Meanwhile
   * the hold (the estimate) still counts against the account, and this instance's later commands
   * on the same connection are applied after it. A failed write is replayed (deferGateWrite).
   * A cost above the hold is charged in full (gw has paid the provider for it) and marked on the
   * ledger entry (`overHoldNanos`); it can take a balance below zero, which then refuses every
   * later call until it is topped up (docs/money.md, "When a balance goes below zero").
   */
  function settle(call: GatewayCall, accounts: SpendAccount[], usage: Usage, estimated: boolean, known?: Cost): Cost {
    const hit = call.record.cache === 'hit';
    const cost = hit ? FREE : (known ?? settlementCost(call, usage));
    call.record.usage = usage;
    call.record.costNanos = cost.costNanos;
    if (cost.unpriced) call.record.unpriced = true;
    // Object.assign, not `{ ...usage, estimated: true }`: the key added to a spread copy would make a
    // fresh hidden class per call (see buildContext in src/providers/http/create-http-provider.ts).
    let units: SpendEntry['units'] = estimated || cost.fromHold ? Object.assign({}, usage, { estimated: true }) : usage;
    if (hit) units.cache = 'hit';
    const held = heldNanos.get(call.record);
    if (held !== undefined && cost.costNanos > held) units = { ...units, overHoldNanos: cost.costNanos - held };
    ledger.record({
      requestId: call.requestId,
      orgId: call.auth.org.id,
      keyId: call.auth.key.id,
      keyAlias: call.auth.key.alias,
      teamId: call.auth.team?.id ?? null,
      user: call.user ?? null,
      model: call.model,
      operation: call.operation,
      units,
      costNanos: cost.costNanos,
      unpriced: cost.unpriced,
      // Dated when the accounts were chosen, not at settlement: a call admitted just before a period
      // boundary and settled after it is counted in the old period by its counters (named by the
      // period); dated at settlement, the ledger would put it in the new one, and a counter seeded
      // from SQL would count it again there.
      createdAt: call.record.spendAccountsChosenAt ?? now(),
    });
    const context = { keyAlias: call.auth.key.alias, requestId: call.requestId, model: call.model };
    gate.settle(call.requestId, accounts, cost.costNanos).then(
      (settled) => {
        const failed = (error: unknown) => report(error, 'budget threshold check failed');
        try {
          reportRejection(thresholds.check(accounts, settled, cost.costNanos, context), failed);
        } catch (error) {
          failed(error);
        }
      },
      (error: unknown) => {
        // The call has run and is answered; the ledger records the spend, and the counter catches up on replay.
        report(error, 'spend settlement failed; will replay');
        options.deferGateWrite?.({ kind: 'settle', reservationId: call.requestId, accounts, actualNanos: cost.costNanos, context });
      },
    );
    return cost;
  }

  /**
   * Drops the call's hold. `taking` is the hold still on its way when it joined the call's admission:
   * an earlier check's refusal fails the call before the hold has landed (or, with allowances,
   * before the claim it is carved from has), and a release sent then would find nothing to drop and
   * leave the hold behind it. So the release goes once the hold is taken, or has failed.
   */
  function release(call: GatewayCall, taking?: Promise<void>): void {
    if (taking === undefined) sendRelease(call.requestId);
    else {
      const send = () => sendRelease(call.requestId);
      taking.then(send, send);
    }
  }

  function sendRelease(reservationId: string): void {
    gate.release(reservationId).catch((error) => {
      report(error, 'reservation release failed; will replay');
      options.deferGateWrite?.({ kind: 'release', reservationId });
    });
  }

  /**
   * Takes the call's hold: at once when the gate answers at once (the in-memory one, on seeded
   * counters), else with a promise. A store that fails gives credit_check_failed, a refusal
   * insufficient_credits, thrown or rejected alike.
   */
  function reserve(call: GatewayCall, accounts: SpendAccount[], amountNanos: number): Awaitable<void> {
    let result: Awaitable<ReserveResult>;
    try {
      const seeding = seeder.ensure(accounts);
      result = seeding
        ? seeding.then(() => gate.reserve(call.requestId, accounts, amountNanos, ttlMs))
        : gate.reserve(call.requestId, accounts, amountNanos, ttlMs);
    } catch (error) {
      throw holdFailed(call, error);
    }
    if (!isPromise(result)) return judgeHold(call, accounts, amountNanos, result);
    return result.then(
      (answered) => judgeHold(call, accounts, amountNanos, answered),
      (error: unknown) => {
        throw holdFailed(call, error);
      },
    );
  }

  /** The hold as a promise, to join to the call's admission: a refusal or failure given at once becomes its rejection. */
  function holdOnItsWay(call: GatewayCall, accounts: SpendAccount[], amountNanos: number): Promise<void> {
    try {
      return Promise.resolve(reserve(call, accounts, amountNanos));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  function holdFailed(call: GatewayCall, error: unknown): GatewayError {
    // The hold may have landed with its reply lost; drop it once the store answers again.
    options.deferGateWrite?.({ kind: 'release', reservationId: call.requestId });
    return new GatewayError('credit_check_failed', 'The credit system is unavailable; the request was not run. Retry shortly.', { cause: error });
  }

  function judgeHold(call: GatewayCall, accounts: SpendAccount[], amountNanos: number, result: ReserveResult): void {
    if (result.ok) return;
    const account = accounts[result.index];
    // The account may now refuse every call while its spend stays short of 100%: say so once.
    thresholds
      .blocked(account, { requiredNanos: amountNanos, availableNanos: result.availableNanos }, { keyAlias: call.auth.key.alias, requestId: call.requestId, model: call.model })
      .catch((error) => report(error, 'budget threshold check failed'));
    throw new GatewayError(
      'insufficient_credits',
      `This call may cost up to ${formatUsd(amountNanos)} USD, more than ${ACCOUNT_NAMES[account.kind]} has left (${formatUsd(result.availableNanos)} USD). Nothing was charged.`,
      { details: { account: account.kind, required_usd: formatUsd(amountNanos), available_usd: formatUsd(result.availableNanos) } },
    );
  }

  /**
   * The hold goes out together with the call's admission checks (pipeline/admission.ts): one round
   * trip to the shared stores instead of two. It becomes one more admission check, after the others,
   * so a refused admission wins over a credit refusal; the call goes on at once and the admission
   * gate decides what waits for the answer. Whenever the call then fails (a refusal included), the
   * meter releases the hold once it has been answered (`release`): a hold that landed is dropped,
   * and releasing one that did not is a no-op. Without admission checks in flight (the embedded
   * stores) the hold is simply awaited. Then the call runs and is settled.
   */
  async function runHeld(call: GatewayCall, accounts: SpendAccount[], amountNanos: number, next: Next): Promise<Outcome> {
    if (!Number.isSafeInteger(amountNanos)) await refuseUnmeterable(call, amountNanos);
    heldNanos.set(call.record, amountNanos);
    let held = call;
    /** The hold while it rides on the call's admission; undefined once it is known to be taken. */
    let taking: Promise<void> | undefined;
    // Held out of this instance's own claim on these accounts: nothing to ask, nothing to join.
    if (!gate.reserveFromAllowance?.(call.requestId, accounts, amountNanos)) {
      if (call.admission === undefined) {
        const holding = reserve(call, accounts, amountNanos);
        if (isPromise(holding)) await holding;
      } else {
        taking = holdOnItsWay(call, accounts, amountNanos);
        held = withAdmissionCheck(call, taking);
      }
    }
    if (held.stream) return runStream(held, accounts, next, taking);
    let outcome: Outcome;
    try {
      outcome = await next(held);
    } catch (error) {
      if (!chargeRefusedAnswer(held, accounts, error)) release(held, taking);
      throw error;
    }
    if (outcome.kind === 'stream') {
      // A non-stream call answered as a stream is metered as one.
      return runStream(held, accounts, () => Promise.resolve(outcome), taking);
    }
    return finishPlain(held, accounts, outcome);
  }

  function runStream(call: GatewayCall, accounts: SpendAccount[], next: Next, taking: Promise<void> | undefined): Promise<Outcome> {
    // The upstream is cut when the client leaves before the stream starts; after that it is drained (metered-stream.ts).
    const upstream = new CallAbort();
    let streaming = false;
    const onClientAbort = () => {
      if (!streaming) upstream.abort(call.signal.reason);
    };
    if (call.signal.aborted) upstream.abort(call.signal.reason);
    else call.signal.addEventListener('abort', onClientAbort, { once: true });
    const downstream: GatewayCall = { ...call, signal: upstream.signal };
    let priced: Cost | undefined;
    return next(downstream).then(
      (outcome) => {
        if (outcome.kind !== 'stream') {
          call.signal.removeEventListener('abort', onClientAbort);
          return finishPlain(call, accounts, outcome);
        }
        streaming = true;
        const hit = call.record.cache === 'hit';
        /** The usage counted here for a stream that reported none, priced once for the trailer and the settlement. */
        let counted: { text: string; usage: Usage; cost: Cost } | undefined;
        const events = meterStream(outcome.events, {
          drainTimeoutMs,
          abortUpstream: () => upstream.abort(new Error('stream drain timed out')),
          knownCostUsd: hit ? formatUsd(FREE.costNanos) : undefined,
          onUsage(usage) {
            priced = hit ? FREE : settlementCost(call, usage);
            const costUsd = formatUsd(priced.costNanos);
            call.record.headers['x-gw-request-cost'] = costUsd;
            return costUsd;
          },
          costWithoutUsage(text) {
            if (text.length === 0) return undefined;
            const usage = fallbackUsage(call, text);
            counted = { text, usage, cost: settlementCost(call, usage) };
            const costUsd = formatUsd(counted.cost.costNanos);
            call.record.headers['x-gw-request-cost'] = costUsd;
            return costUsd;
          },
          async onEnd(end) {
            call.signal.removeEventListener('abort', onClientAbort);
            if (end.usage) {
              settle(call, accounts, end.usage, false, priced);
            } else if (counted !== undefined && counted.text === end.text) {
              settle(call, accounts, counted.usage, true, counted.cost);
            } else if (end.text.length > 0 || hit) {
              // Text without usage: the upstream reported none, or failed midway after producing it.
              settle(call, accounts, fallbackUsage(call, end.text), true);
            } else {
              release(call);
            }
          },
        });
        return { kind: 'stream', events } satisfies Outcome;
      },
      (error: unknown) => {
        call.signal.removeEventListener('abort', onClientAbort);
        if (!chargeRefusedAnswer(call, accounts, error)) release(call, taking);
        throw error;
      },
    );
  }

  /**
   * Settles an answered call. The call has run: whatever fails here is logged and the answer still
   * goes out, and the hold is released rather than left to its deadline (a cost that cannot be
   * computed is already charged at the hold by settlementCost).
   */
  function finishPlain(call: GatewayCall, accounts: SpendAccount[], outcome: Exclude<Outcome, { kind: 'stream' }>): Outcome {
    try {
      let usage = outcome.usage;
      let estimated = false;
      if (!usage) {
        usage = call.record.usage ?? fallbackUsage(call, completionText(outcome));
        estimated = call.record.usage === undefined;
      }
      const cost = settle(call, accounts, usage, estimated);
      call.record.headers['x-gw-request-cost'] = formatUsd(cost.costNanos);
    } catch (error) {
      report(error, 'settlement failed; the hold was released');
      release(call);
    }
    return outcome;
  }

  /**
   * A call that fails after its upstream answered (a post-call guardrail refused the answer, the
   * error carries it) is charged as a normal call: gw has paid the provider, and a refusal that
   * made answers free would let a caller have them generated at no cost. False when the error
   * carries no answer (the hold is then released) or settling it failed (logged).
   */
  function chargeRefusedAnswer(call: GatewayCall, accounts: SpendAccount[], error: unknown): boolean {
    const answer = isGatewayError(error) ? error.upstreamAnswer : undefined;
    if (!answer) return false;
    try {
      const usage = answer.usage ?? fallbackUsage(call, answer.producedText);
      const cost = settle(call, accounts, usage, answer.usage === undefined);
      call.record.headers['x-gw-request-cost'] = formatUsd(cost.costNanos);
      return true;
    } catch (settleError) {
      report(settleError, 'settlement of a refused answer failed; the hold was released');
      return false;
    }
  }

  /**
   * A call whose most possible cost is past the range money is counted in exactly (about 9 million
   * USD) cannot be held: 400 naming the output cap when it asks for more tokens than any call is
   * billed for (MAX_UPSTREAM_UNITS_PER_CALL), else 402. After admission, as every refusal here.
   */
  async function refuseUnmeterable(call: GatewayCall, amountNanos: number): Promise<never> {
    await admitted(call);
    const body = call.request as Record<string, unknown>;
    const param = ['max_completion_tokens', 'max_tokens'].find((field) => typeof body[field] === 'number' && (body[field] as number) > MAX_UPSTREAM_UNITS_PER_CALL);
    const most = `${formatUsd(amountNanos)} USD, beyond the ${formatUsd(MAX_EXACT_NANOS)} USD gw can meter for one call`;
    if (param) {
      throw new GatewayError('invalid_request', `Invalid '${param}': with it this call could cost up to ${most}. Lower '${param}'.`, { param });
    }
    throw new GatewayError('insufficient_credits', `This call may cost up to ${most}; no balance or budget can cover it. Nothing was charged.`, {
      details: { required_usd: formatUsd(amountNanos) },
    });
  }

  async function refuseUnpriced(call: GatewayCall): Promise<never> {
    await admitted(call);
    throw new GatewayError('model_not_priced', `The model "${call.model}" has no price for this operation, so it cannot be metered. Ask an admin to set its price.`, {
      param: 'model',
    });
  }

  return {
    name: 'meter',
    // Not an async function: one returning runHeld's promise would settle a turn of two microtasks
    // and a promise later, on every call. A synchronous failure is still answered as a rejection.
    run(call, next) {
      if (call.operation === 'moderation') return admitted(call).then(() => next(call));
      try {
        const estimate = reservationCost(call);
        if (estimate.unpriced && !call.auth.org.settings.allowUnpricedModels) return refuseUnpriced(call);
        accountsChosenAt = now();
        const accounts = spendAccountsFor(call.auth, call.user, windowOf, credits);
        call.record.spendAccounts = accounts;
        call.record.spendAccountsChosenAt = accountsChosenAt;
        return runHeld(call, accounts, estimate.costNanos, next);
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
}

/** What a JSON answer produced (content, function calls), charged when its upstream reported no usage. */
function completionText(outcome: Exclude<Outcome, { kind: 'stream' }>): string {
  if (outcome.kind !== 'json') return '';
  const choices = (outcome.body as { choices?: Array<{ message?: ProducedMessageFields; text?: unknown } | null> } | null)?.choices;
  if (!Array.isArray(choices)) return '';
  const parts: string[] = [];
  for (const choice of choices) collectProducedText(choice?.message, choice?.text, parts);
  return parts.join('');
}
