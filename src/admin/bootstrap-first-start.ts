import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { acquireLease, releaseLease } from '../db/sql-lease.js';
import type { KeyIssuer } from '../keys/key-issuer.js';
import type { TenancyStore } from '../tenancy/tenancy-store.js';
import type { RateLimitTier } from '../tenancy/tenancy-types.js';

export interface BootstrapResult {
  /** Set only on the start that created them: shown once, never stored in clear. */
  masterKey?: string;
  firstKey?: string;
  orgId?: string;
}

const LEASE = 'first-start-bootstrap';
/** Long enough for the few writes of a bootstrap; if its holder dies, another instance takes over after this. */
const LEASE_TTL_MS = 30_000;
const LEASE_POLL_MS = 100;

/**
 * On an empty database, creates the `default` organization and a first virtual key so that a
 * newcomer can call the gateway straight after `npm start`. Instances starting together on an
 * empty database take turns under a lease: the first creates the org (and its credit and key), the
 * others then find it and start normally.
 */
export async function bootstrapFirstStart(options: {
  db: Kysely<Database>;
  store: TenancyStore;
  issuer: KeyIssuer;
  generatedMasterKey: string | undefined;
  tier?: RateLimitTier;
  apiKey?: string;
  onOrgCreated?: (orgId: string) => Promise<void>;
}): Promise<BootstrapResult> {
  const result: BootstrapResult = { masterKey: options.generatedMasterKey };
  // Every start after the first: no lease needed.
  if ((await options.store.listOrganizations()).length > 0) return result;
  const holder = randomUUID();
  while (!(await acquireLease(options.db, LEASE, holder, LEASE_TTL_MS))) await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS));
  try {
    // Checked again under the lease: another instance may have bootstrapped while this one waited.
    if ((await options.store.listOrganizations()).length > 0) return result;
    const org = await options.store.createOrganization({ name: 'default', tier: options.tier ?? 'tier1' });
    await options.onOrgCreated?.(org.id);
    const { secret } = await options.issuer.issue({ orgId: org.id, name: 'first key' }, { secret: options.apiKey });
    return { ...result, firstKey: secret, orgId: org.id };
  } finally {
    // Not releasing only makes a waiting instance wait for the expiry; it must not fail this start.
    await releaseLease(options.db, LEASE, holder).catch(() => {});
  }
}
