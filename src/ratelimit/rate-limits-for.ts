import { ENTERPRISE_DEFAULT_LIMITS, TIER_LIMITS, type AuthContext, type RateLimits } from '../tenancy/tenancy-types.js';

export interface EffectiveLimits {
  key: RateLimits;
  /** Limits of each `user` value within the key, when the key sets per-user overrides. */
  user: RateLimits | null;
}

function override(base: RateLimits, patch: Partial<RateLimits> | null | undefined): RateLimits {
  if (!patch) return base;
  return {
    rpm: patch.rpm ?? base.rpm,
    tpm: patch.tpm ?? base.tpm,
    tps: patch.tps ?? base.tps,
  };
}

/**
 * Limits in force for a key: the org's tier (SPEC "Limits"; Enterprise is custom), then the org's
 * custom limits, then the key's own; per-`user` overrides apply on top of the key's, to each user
 * value separately, while the key's own limits still cap the key as a whole.
 */
export function rateLimitsFor(auth: AuthContext): EffectiveLimits {
  const tier = auth.org.tier === 'enterprise' ? ENTERPRISE_DEFAULT_LIMITS : TIER_LIMITS[auth.org.tier];
  const key = override(override(tier ?? TIER_LIMITS.tier1, auth.org.customLimits), auth.key.limits);
  return { key, user: auth.key.userLimits ? override(key, auth.key.userLimits) : null };
}
