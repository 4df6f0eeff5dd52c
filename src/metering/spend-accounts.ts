import type { AuthContext, Budget, BudgetPeriod } from '../tenancy/tenancy-types.js';
import type { PeriodWindow } from './spend-periods.js';
import type { AccountKind, SpendAccount } from './spend-gate.js';

export const DEFAULT_THRESHOLDS: readonly number[] = [0.5, 0.8, 1];

/** Counters of a past period are kept this long after it ends, for settlements of calls that straddle the boundary. */
const PERIOD_RETENTION_MS = 7 * 86_400_000;

/** The credit account of an org: its balance, never reset. */
export function creditAccount(orgId: string): SpendAccount {
  return {
    key: `credit:${orgId}`,
    kind: 'credit',
    limitNanos: null,
    expiresAt: 0,
    orgId,
    ownerId: orgId,
    period: 'none',
    periodStartMs: 0,
    thresholds: DEFAULT_THRESHOLDS,
  };
}

function budgetAccount(
  kind: AccountKind,
  orgId: string,
  ownerId: string,
  budget: Budget,
  window: PeriodWindow,
  user?: string,
): SpendAccount {
  // The user value is opaque client text: encode it so it cannot forge another counter's name. A
  // per-user budget set again has a generation: new counters (Budget.generation).
  const generation = budget.generation === undefined ? '' : `~${budget.generation}`;
  const owner = user === undefined ? ownerId : `${ownerId}${generation}:${encodeURIComponent(user)}`;
  return {
    key: `${kind}:${owner}:${window.id}`,
    kind,
    limitNanos: budget.limitNanos,
    expiresAt: window.endMs === 0 ? 0 : window.endMs + PERIOD_RETENTION_MS,
    orgId,
    ownerId,
    user,
    period: budget.period,
    periodStartMs: window.startMs,
    thresholds: budget.thresholds.length > 0 ? budget.thresholds : DEFAULT_THRESHOLDS,
    ...(budget.generation !== undefined && user !== undefined && { setAgain: true }),
  };
}

/** The owners whose budgets have counters named by their id alone (per-user counters add the user). */
export type BudgetOwnerKind = 'org' | 'team' | 'key';

const PERIODS: readonly BudgetPeriod[] = ['none', 'daily', 'weekly', 'monthly'];

/** The counter names an owner's budget may have now, one per period (named as budgetAccount names them). */
export function budgetCounterKeys(kind: BudgetOwnerKind, ownerId: string, windowOf: (period: BudgetPeriod) => PeriodWindow): string[] {
  return PERIODS.map((period) => `${kind}:${ownerId}:${windowOf(period).id}`);
}

/**
 * Every account a call is charged to: the org's credits (when credits are enforced), then the org,
 * team, key and per-`user` budgets that are set, each in its current period bucket.
 */
export function spendAccountsFor(
  auth: AuthContext,
  user: string | undefined,
  windowOf: (period: BudgetPeriod) => PeriodWindow,
  credits: boolean,
): SpendAccount[] {
  const accounts: SpendAccount[] = [];
  const orgId = auth.org.id;
  if (credits) accounts.push(creditAccount(orgId));
  const { org, team, key } = auth;
  if (org.budget) accounts.push(budgetAccount('org', orgId, orgId, org.budget, windowOf(org.budget.period)));
  if (team?.budget) accounts.push(budgetAccount('team', orgId, team.id, team.budget, windowOf(team.budget.period)));
  if (key.budget) accounts.push(budgetAccount('key', orgId, key.id, key.budget, windowOf(key.budget.period)));
  if (key.userBudget && user) accounts.push(budgetAccount('user', orgId, key.id, key.userBudget, windowOf(key.userBudget.period), user));
  return accounts;
}
