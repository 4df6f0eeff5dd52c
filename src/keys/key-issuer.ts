import { GatewayError } from '../errors/gateway-error.js';
import type { ChangeFeed } from '../lib/change-feed.js';
import type { EventBus } from '../lib/event-bus.js';
import type { KeyPatch, NewVirtualKey, TenancyStore } from '../tenancy/tenancy-store.js';
import type { VirtualKey } from '../tenancy/tenancy-types.js';
import { generateVirtualKey, hashVirtualKey } from './virtual-key-format.js';

export type KeyRequest = Omit<NewVirtualKey, 'keyHash' | 'last4'>;

/** Creating, changing and revoking keys, with the checks, events and cache invalidation that go with them. */
export interface KeyIssuer {
  /** Returns the key record and the full secret, which is never available again. */
  issue(request: KeyRequest, options?: { secret?: string }): Promise<{ key: VirtualKey; secret: string }>;
  /** Applies a patch; a new team must belong to the key's org (400 otherwise). */
  update(keyId: string, patch: KeyPatch): Promise<VirtualKey>;
  /**
   * Idempotent: revoking a revoked key returns it unchanged and raises no second event, but
   * announces the revocation again, so a retry after a failed announcement reaches every instance.
   */
  revoke(keyId: string): Promise<VirtualKey>;
}

export function createKeyIssuer(options: { store: TenancyStore; hashKey: Buffer; changes: ChangeFeed; events: EventBus }): KeyIssuer {
  const { store } = options;

  /** A key takes its team's model list and budget, so the team must be one of the key's own org. */
  async function requireTeamInOrg(teamId: string, orgId: string): Promise<void> {
    const team = await store.getTeam(teamId);
    if (!team || team.orgId !== orgId) throw new GatewayError('invalid_request', `Unknown team '${teamId}' in this organization.`, { param: 'team_id' });
  }

  return {
    async issue(request, issueOptions = {}) {
      const org = await store.getOrganization(request.orgId);
      if (!org) throw new GatewayError('not_found', `Unknown organization '${request.orgId}'.`);
      if (request.teamId) await requireTeamInOrg(request.teamId, request.orgId);
      // A caller-chosen secret exists for automation (GW_BOOTSTRAP_API_KEY); normally it is random.
      const secret = issueOptions.secret ?? generateVirtualKey();
      const key = await store.createKey({ ...request, keyHash: hashVirtualKey(secret, options.hashKey), last4: secret.slice(-4) });
      await options.changes.publish({ kind: 'key', id: key.id });
      options.events.publish({
        kind: 'key.created',
        orgId: key.orgId,
        severity: 'INFO',
        title: `Virtual key ${key.alias} created`,
        message: `The key "${key.name}" (${key.alias}) was created.`,
        details: { org_id: key.orgId, key_alias: key.alias, key_name: key.name },
        occurredAt: Date.now(),
      });
      return { key, secret };
    },
    async update(keyId, patch) {
      const current = await store.getKey(keyId);
      if (!current) throw new GatewayError('not_found', `Unknown key '${keyId}'.`);
      if (patch.teamId) await requireTeamInOrg(patch.teamId, current.orgId);
      const key = await store.updateKey(keyId, patch);
      if (!key) throw new GatewayError('not_found', `Unknown key '${keyId}'.`);
      await options.changes.publish({ kind: 'key', id: key.id });
      return key;
    },
    async revoke(keyId) {
      const revoked = await store.revokeKey(keyId);
      if (!revoked) throw new GatewayError('not_found', `Unknown key '${keyId}'.`);
      const { key, revokedNow } = revoked;
      // The event first: the key is revoked in the database whether or not the notice goes out.
      if (revokedNow) {
        options.events.publish({
          kind: 'key.revoked',
          orgId: key.orgId,
          severity: 'WARNING',
          title: `Virtual key ${key.alias} revoked`,
          message: `The key "${key.name}" (${key.alias}) was revoked; later requests with it are rejected.`,
          details: { org_id: key.orgId, key_alias: key.alias, key_name: key.name },
          occurredAt: Date.now(),
        });
      }
      // Every instance drops its cached copy now; requests already in flight complete. Sent again on
      // a repeat: the admin retries when the first announcement failed (a 500 after the row changed).
      await options.changes.publish({ kind: 'key', id: key.id });
      return key;
    },
  };
}
