/** Organizations, teams and virtual keys as the request path sees them (read models, not rows). */

export type RateLimitTier = 'tier1' | 'tier2' | 'tier3' | 'enterprise';

export interface RateLimits {
  rpm: number;
  tpm: number;
  /** Requests per second: the spec's TPS column, read as a burst ceiling (docs/rate-limits.md). */
  tps: number;
}

export type BudgetPeriod = 'none' | 'daily' | 'weekly' | 'monthly';

export interface Budget {
  limitNanos: number;
  period: BudgetPeriod;
  /** Fractions of the limit (0.5, 0.8, 1) that fire budget.threshold events. */
  thresholds: number[];
  /**
   * Per-user budgets only: when it was set on a key that had none (ms), absent for one set when the
   * key was created. It is part of the per-user counters' names, so a per-user budget removed and
   * set again starts new counters that every instance seeds from SQL (the spend made meanwhile
   * included), rather than the old ones, which other instances may still hold unmarked.
   */
  generation?: number;
}

export interface OrgSettings {
  cacheDefault: boolean;
  cacheTtlSeconds: number;
  allowUnpricedModels: boolean;
  defaultPromptTemplateId: string | null;
  logMessageContents: boolean;
}

export interface Organization {
  id: string;
  name: string;
  tier: RateLimitTier;
  /** Custom limits (Enterprise, or overrides); null fields fall back to the tier. */
  customLimits: Partial<RateLimits>;
  /** Model ids this org may use; null means every model in the catalog. */
  enabledModels: string[] | null;
  budget: Budget | null;
  settings: OrgSettings;
  createdAt: number;
}

export interface Team {
  id: string;
  orgId: string;
  name: string;
  allowedModels: string[] | null;
  budget: Budget | null;
  createdAt: number;
}

export type KeyStatus = 'active' | 'revoked';
export type KeyRole = 'inference' | 'org_admin';

export interface VirtualKey {
  id: string;
  orgId: string;
  teamId: string | null;
  name: string;
  /** `sk-...<last 4>`. */
  alias: string;
  role: KeyRole;
  status: KeyStatus;
  budget: Budget | null;
  /** Per-`user` budget inside this key (the spec's per-consumer spend), if set. */
  userBudget: Budget | null;
  limits: Partial<RateLimits>;
  /** Per-`user` rate-limit overrides within this key. */
  userLimits: Partial<RateLimits> | null;
  allowedModels: string[] | null;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

export interface AuthContext {
  key: VirtualKey;
  org: Organization;
  team: Team | null;
}

export const TIER_LIMITS: Record<Exclude<RateLimitTier, 'enterprise'>, RateLimits> = {
  tier1: { rpm: 500, tpm: 500_000, tps: 10 },
  tier2: { rpm: 500, tpm: 500_000, tps: 50 },
  tier3: { rpm: 1_000, tpm: 1_000_000, tps: 200 },
};

/** Enterprise limits are custom; these apply until an admin sets them. */
export const ENTERPRISE_DEFAULT_LIMITS: RateLimits = { rpm: 10_000, tpm: 10_000_000, tps: 1_000 };

export const DEFAULT_ORG_SETTINGS: OrgSettings = {
  cacheDefault: true,
  cacheTtlSeconds: 3600,
  allowUnpricedModels: false,
  defaultPromptTemplateId: null,
  logMessageContents: false,
};
