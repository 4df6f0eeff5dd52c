import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
import type { KeyAuthenticator } from '../keys/key-authenticator.js';
import type { AuthContext } from '../tenancy/tenancy-types.js';
import { bearerToken } from '../http/bearer-token.js';
import type { AdminPrincipal, ManagementAuth } from '../http/management-auth.js';
import type { MasterCredential } from './master-credential.js';
import { MASTER_KEY_PREFIX } from './master-credential.js';

/** Resolves a dashboard session cookie (and checks CSRF for state-changing calls); wired by the dashboard. */
export type SessionResolver = (request: FastifyRequest) => Promise<AdminPrincipal | undefined>;

export interface ManagementAuthOptions {
  keys: KeyAuthenticator;
  master: MasterCredential;
  sessions?: {
    resolve: SessionResolver;
    /** The org context of a dashboard session, for the bearer-key endpoints the dashboard also calls. */
    resolveKey?: (request: FastifyRequest) => Promise<AuthContext | undefined>;
  };
}

export function createManagementAuth(options: ManagementAuthOptions): ManagementAuth {
  return {
    async requireKey(request) {
      const token = bearerToken(request);
      if (!token && options.sessions?.resolveKey) {
        const context = await options.sessions.resolveKey(request);
        if (context) return context;
      }
      return options.keys.authenticate(token);
    },
    async requireAdmin(request) {
      const token = bearerToken(request);
      if (token?.startsWith(MASTER_KEY_PREFIX) || (token && !token.startsWith('sk-gw-'))) {
        if (options.master.verify(token)) return { scope: 'master' };
        throw new GatewayError('invalid_api_key', 'Invalid admin credential.');
      }
      if (token) {
        const auth = await options.keys.authenticate(token);
        if (auth.key.role !== 'org_admin') {
          throw new GatewayError('permission_denied', 'This key is not an org-admin key; admin endpoints need the master credential or an org-admin key.');
        }
        return { scope: 'org', orgId: auth.org.id, keyId: auth.key.id };
      }
      const session = await options.sessions?.resolve(request);
      if (session) return session;
      throw new GatewayError('invalid_api_key', 'Missing credential: pass the master credential or an org-admin key as a Bearer token.');
    },
  };
}
