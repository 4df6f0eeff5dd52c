import type { Awaitable } from '../lib/awaitable.js';
import type { EventBus, Severity } from '../lib/event-bus.js';
import { formatUsd } from './format-usd.js';
import type { SettledAccount, SpendAccount, SpendGate } from './spend-gate.js';

/** Severity rises with the threshold (SPEC "Events"): 100% CRITICAL, from 80% HIGH, below WARNING. */
export function thresholdSeverity(threshold: number): Severity {
  if (threshold >= 1) return 'CRITICAL';
  if (threshold >= 0.8) return 'HIGH';
  return 'WARNING';
}

/** A period's markers outlive it a little; unbounded accounts keep theirs for a year. */
const MARKER_MARGIN_MS = 86_400_000;
const UNBOUNDED_MARKER_MS = 365 * 86_400_000;

export interface ThresholdContext {
  keyAlias: string;
  requestId: string;
  model: string;
}

export interface ThresholdNotifier {
  /**
   * Publishes budget.threshold for every threshold this settlement crossed (once per crossing per
   * period, across instances). A settlement that crossed none (nearly all) is answered at once,
   * without a promise.
   */
  check(accounts: readonly SpendAccount[], settled: readonly SettledAccount[], costNanos: number, context: ThresholdContext): Awaitable<void>;
  /**
   * The account refused a call (402) it could not cover: its spend may stop short of 100% for
   * good, every later call being refused too. Publishes its highest threshold, saying the account
   * blocks calls, unless that threshold already fired this period (the same marker as a crossing,
   * so it fires once whichever comes first).
   */
  blocked(account: SpendAccount, refused: { requiredNanos: number; availableNanos: number }, context: ThresholdContext): Promise<void>;
}

/** Why a threshold fires: spend crossed it, or the account refused a call it could not cover. */
interface Refusal {
  requiredNanos: number;
  availableNanos: number;
}

export function createThresholdNotifier(options: { gate: SpendGate; events: EventBus; now?: () => number }): ThresholdNotifier {
  const now = options.now ?? Date.now;

  /** The marker that makes a threshold fire once per period (the credit account's "period" is its credited total). */
  function markerOf(account: SpendAccount, limitNanos: number, threshold: number): string {
    const scope = account.kind === 'credit' ? `${account.key}:${limitNanos}` : account.key;
    return `threshold:${scope}:${threshold}`;
  }

  /** Markers this instance already claimed: a blocked account refuses call after call, and need not ask the store each time. */
  const claimedHere = new Set<string>();

  async function fire(account: SpendAccount, state: SettledAccount, threshold: number, context: ThresholdContext, refusal?: Refusal): Promise<void> {
    // The credit account's "period" is its credited total: a top-up starts a fresh set of crossings.
    const marker = markerOf(account, state.limitNanos, threshold);
    const ttlMs = account.expiresAt === 0 ? UNBOUNDED_MARKER_MS : Math.max(1, account.expiresAt - now() + MARKER_MARGIN_MS);
    if (!(await options.gate.claimOnce(marker, ttlMs))) {
      remember(marker);
      return;
    }
    remember(marker);
    const percent = Math.round(threshold * 100);
    const subject =
      account.kind === 'credit' ? 'credit balance' : account.kind === 'user' ? `budget of user "${account.user}" on key ${context.keyAlias}` : `${account.kind} budget`;
    const details: Record<string, unknown> = {
      org_id: account.orgId,
      account: account.kind,
      period: account.period,
      threshold,
      current_spend: formatUsd(state.spentNanos),
      budget: formatUsd(state.limitNanos),
      request_id: context.requestId,
      model: context.model,
    };
    if (account.kind === 'key' || account.kind === 'user') details.key_alias = context.keyAlias;
    if (account.kind === 'team') details.team_id = account.ownerId;
    if (account.kind === 'user') details.user = account.user;
    if (account.kind === 'credit') details.current_balance = formatUsd(state.limitNanos - state.spentNanos);
    const period = account.period === 'none' ? 'no reset' : account.period;
    let title = `${percent}% of the ${subject} used`;
    let message = `Spend reached ${details.current_spend} USD of ${details.budget} USD (${period}).`;
    if (refusal) {
      details.blocked = true;
      details.required_usd = formatUsd(refusal.requiredNanos);
      details.available_usd = formatUsd(refusal.availableNanos);
      const used = state.limitNanos > 0 ? Math.floor((state.spentNanos / state.limitNanos) * 100) : 100;
      title = `The ${subject} blocks calls (${used}% used)`;
      message = `A call that may cost up to ${details.required_usd} USD was refused: ${details.available_usd} USD of ${details.budget} USD is left (spent ${details.current_spend} USD, ${period}). Calls like it are refused until the ${account.kind === 'credit' ? 'balance is topped up' : 'budget is raised or its period resets'}.`;
    }
    options.events.publish({
      kind: 'budget.threshold',
      orgId: account.orgId,
      severity: thresholdSeverity(threshold),
      title,
      message,
      details,
      occurredAt: now(),
    });
  }

  async function fireInTurn(crossed: Array<{ account: SpendAccount; state: SettledAccount; threshold: number }>, context: ThresholdContext): Promise<void> {
    for (const { account, state, threshold } of crossed) await fire(account, state, threshold, context);
  }

  function remember(marker: string): void {
    // Markers of past periods are never asked again; a bound keeps a long-running instance's set small.
    if (claimedHere.size >= 10_000) claimedHere.clear();
    claimedHere.add(marker);
  }

  return {
    check(accounts, settled, costNanos, context) {
      if (costNanos <= 0) return;
      let crossed: Array<{ account: SpendAccount; state: SettledAccount; threshold: number }> | undefined;
      for (let index = 0; index < accounts.length; index++) {
        const account = accounts[index];
        const state = settled[index];
        if (!state || state.limitNanos <= 0) continue;
        const before = state.spentNanos - costNanos;
        for (const threshold of account.thresholds) {
          const mark = Math.ceil(threshold * state.limitNanos);
          if (before < mark && state.spentNanos >= mark) (crossed ??= []).push({ account, state, threshold });
        }
      }
      return crossed && fireInTurn(crossed, context);
    },
    async blocked(account, refused, context) {
      if (account.thresholds.length === 0) return;
      const highest = Math.max(...account.thresholds);
      // A budget's limit is known here; the credit account's is its credited total, read below.
      if (account.limitNanos !== null && claimedHere.has(markerOf(account, account.limitNanos, highest))) return;
      const state = await options.gate.read(account.key);
      const limitNanos = account.limitNanos ?? state.creditedNanos;
      if (limitNanos <= 0 || claimedHere.has(markerOf(account, limitNanos, highest))) return;
      await fire(account, { spentNanos: state.spentNanos, limitNanos }, highest, context, refused);
    },
  };
}
