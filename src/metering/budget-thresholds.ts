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
  /** Publishes budget.threshold for every threshold this settlement crossed (once per crossing per period, across instances). */
  check(accounts: readonly SpendAccount[], settled: readonly SettledAccount[], costNanos: number, context: ThresholdContext): Promise<void>;
}

export function createThresholdNotifier(options: { gate: SpendGate; events: EventBus; now?: () => number }): ThresholdNotifier {
  const now = options.now ?? Date.now;

  async function fire(account: SpendAccount, state: SettledAccount, threshold: number, context: ThresholdContext): Promise<void> {
    // The credit account's "period" is its credited total: a top-up starts a fresh set of crossings.
    const scope = account.kind === 'credit' ? `${account.key}:${state.limitNanos}` : account.key;
    const ttlMs = account.expiresAt === 0 ? UNBOUNDED_MARKER_MS : Math.max(1, account.expiresAt - now() + MARKER_MARGIN_MS);
    if (!(await options.gate.claimOnce(`threshold:${scope}:${threshold}`, ttlMs))) return;
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
    options.events.publish({
      kind: 'budget.threshold',
      orgId: account.orgId,
      severity: thresholdSeverity(threshold),
      title: `${percent}% of the ${subject} used`,
      message: `Spend reached ${details.current_spend} USD of ${details.budget} USD (${account.period === 'none' ? 'no reset' : account.period}).`,
      details,
      occurredAt: now(),
    });
  }

  return {
    async check(accounts, settled, costNanos, context) {
      if (costNanos <= 0) return;
      for (let index = 0; index < accounts.length; index++) {
        const account = accounts[index];
        const state = settled[index];
        if (!state || state.limitNanos <= 0) continue;
        const before = state.spentNanos - costNanos;
        for (const threshold of account.thresholds) {
          const mark = Math.ceil(threshold * state.limitNanos);
          if (before < mark && state.spentNanos >= mark) await fire(account, state, threshold, context);
        }
      }
    },
  };
}
