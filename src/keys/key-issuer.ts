import { GatewayError } from '../errors/gateway-error.js';
import type { ChangeFeed } from '../lib/change-feed.js';
import type { EventBus } from '../lib/event-bus.js';
import type { NewVirtualKey, TenancyStore } from '../tenancy/tenancy-store.js';
import type { VirtualKey } from '../tenancy/tenancy-types.js';
import { generateVirtualKey, hashVirtualKey } from './virtual-key-format.js';

export type KeyRequest = Omit<NewVirtualKey, 'keyHash' | 'last4'>;

/** Creating and revoking keys, with the events and cache invalidation that go with them. */
export interface KeyIssuer {
  /** Returns the key record and the full secret, which is never available again. */
  issue(request: KeyRequest, options?: { secret?: string }): Promise<{ key: VirtualKey; secret: string }>;
  revoke(keyId: string): Promise<VirtualKey>;
}

export function createKeyIssuer(options: { store: TenancyStore; hashKey: Buffer; changes: ChangeFeed; events: EventBus }): KeyIssuer {
  return {
    async issue(request, issueOptions = {}) {
      const org = await options.store.getOrganization(request.orgId);
      if (!org) throw new GatewayError('not_found', `Unknown organization '${request.orgId}'.`);
      if (request.teamId) {
        const team = await options.store.getTeam(request.teamId);
        if (!team || team.orgId !== request.orgId) throw new GatewayError('invalid_request', `Unknown team '${request.teamId}' in this organization.`, { param: 'team_id' });
      }
      // A caller-chosen secret exists for automation (GW_BOOTSTRAP_API_KEY); normally it is random.
      const secret = issueOptions.secret ?? generateVirtualKey();
      const key = await options.store.createKey({ ...request, keyHash: hashVirtualKey(secret, options.hashKey), last4: secret.slice(-4) });
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
    async revoke(keyId) {
      const key = await options.store.revokeKey(keyId);
      if (!key) throw new GatewayError('not_found', `Unknown key '${keyId}'.`);
      // Every instance drops its cached copy now; requests already in flight complete.
      await options.changes.publish({ kind: 'key', id: key.id });
      options.events.publish({
        kind: 'key.revoked',
        orgId: key.orgId,
        severity: 'WARNING',
        title: `Virtual key ${key.alias} revoked`,
        message: `The key "${key.name}" (${key.alias}) was revoked; later requests with it are rejected.`,
        details: { org_id: key.orgId, key_alias: key.alias, key_name: key.name },
        occurredAt: Date.now(),
      });
      return key;
    },
  };
}
