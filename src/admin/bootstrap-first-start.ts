import type { KeyIssuer } from '../keys/key-issuer.js';
import type { TenancyStore } from '../tenancy/tenancy-store.js';
import type { RateLimitTier } from '../tenancy/tenancy-types.js';

export interface BootstrapResult {
  /** Set only on the start that created them: shown once, never stored in clear. */
  masterKey?: string;
  firstKey?: string;
  orgId?: string;
}

/**
 * On an empty database, creates the `default` organization and a first virtual key so that a
 * newcomer can call the gateway straight after `npm start`.
 */
export async function bootstrapFirstStart(options: {
  store: TenancyStore;
  issuer: KeyIssuer;
  generatedMasterKey: string | undefined;
  tier?: RateLimitTier;
  apiKey?: string;
  onOrgCreated?: (orgId: string) => Promise<void>;
}): Promise<BootstrapResult> {
  const result: BootstrapResult = { masterKey: options.generatedMasterKey };
  const orgs = await options.store.listOrganizations();
  if (orgs.length > 0) return result;
  const org = await options.store.createOrganization({ name: 'default', tier: options.tier ?? 'tier1' });
  await options.onOrgCreated?.(org.id);
  const { secret } = await options.issuer.issue({ orgId: org.id, name: 'first key' }, { secret: options.apiKey });
  return { ...result, firstKey: secret, orgId: org.id };
}
