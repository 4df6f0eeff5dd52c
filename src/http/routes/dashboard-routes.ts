import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { MASTER_KEY_PREFIX, type MasterCredential } from '../../admin/master-credential.js';
import type { DashboardSessions } from '../../dashboard/dashboard-sessions.js';
import { CSRF_HEADER } from '../../dashboard/dashboard-sessions.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { KeyAuthenticator } from '../../keys/key-authenticator.js';
import { validateBody } from '../validate-body.js';
import { readDashboardFiles, type DashboardFile } from './dashboard-files.js';

export interface DashboardRouteDependencies {
  sessions: DashboardSessions;
  keys: KeyAuthenticator;
  master: MasterCredential;
  /** The built single-page app (index.html + assets); undefined serves a page saying how to build it. */
  staticDirectory: string | undefined;
}

const signInBody = z.strictObject({ credential: z.string().min(1).max(500) });

// Everything the page needs is bundled and served from this origin; nothing inline, no third parties.
const PAGE_HEADERS = {
  'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
} as const;

const NOT_BUILT_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>gw dashboard</title></head>
<body><main><h1>The dashboard is not built</h1><p>Run <code>npm run build</code> (or <code>npm run build:dashboard</code>) and restart the gateway.</p></main></body></html>`;

function sessionView(claims: { scope: 'master' } | { scope: 'org'; orgId: string }, csrfToken: string, expiresAt: number) {
  return { scope: claims.scope, org_id: claims.scope === 'org' ? claims.orgId : null, csrf_token: csrfToken, csrf_header: CSRF_HEADER, expires_at: Math.floor(expiresAt / 1000) };
}

/**
 * The dashboard: its static files under /dashboard (any other path under it answers index.html, so
 * client-side routes survive a reload) and its session endpoints under /dashboard/api/session.
 */
export function registerDashboardRoutes(app: FastifyInstance, dependencies: DashboardRouteDependencies): void {
  const { sessions, keys, master, staticDirectory } = dependencies;
  const schema = { tags: ['Dashboard'] };

  app.post('/dashboard/api/session', { schema: { ...schema, summary: 'Sign in with the master credential or an org-admin key' } }, async (request, reply) => {
    const { credential } = validateBody(signInBody, request.body);
    if (credential.startsWith(MASTER_KEY_PREFIX) || !credential.startsWith('sk-gw-')) {
      if (!master.verify(credential)) throw new GatewayError('invalid_api_key', 'That credential is not valid.');
      const started = sessions.start(request, reply, { scope: 'master' });
      return sessionView({ scope: 'master' }, started.csrfToken, started.expiresAt);
    }
    const auth = await keys.authenticate(credential);
    if (auth.key.role !== 'org_admin') {
      throw new GatewayError('permission_denied', 'This key is not an org-admin key. Sign in with the master credential or a key created with role org_admin.');
    }
    const subject = { scope: 'org' as const, orgId: auth.org.id, keyId: auth.key.id };
    const started = sessions.start(request, reply, subject);
    return sessionView(subject, started.csrfToken, started.expiresAt);
  });

  app.get('/dashboard/api/session', { schema: { ...schema, summary: 'The current dashboard session' } }, async (request) => {
    const claims = await sessions.read(request);
    if (!claims) throw new GatewayError('invalid_api_key', 'Not signed in.');
    return sessionView(claims, sessions.csrfFor(claims), claims.expiresAt);
  });

  app.delete('/dashboard/api/session', { schema: { ...schema, summary: 'Sign out' } }, async (request, reply) => {
    // resolve() checks the CSRF token, so another site cannot sign a user out either.
    await sessions.resolve(request);
    sessions.end(request, reply);
    return { signed_out: true };
  });

  const files = staticDirectory ? readDashboardFiles(staticDirectory) : new Map<string, DashboardFile>();
  const page = files.get('index.html');
  const sendPage = (reply: FastifyReply) => {
    reply.headers({ ...PAGE_HEADERS, 'cache-control': 'no-cache' });
    return reply.type('text/html; charset=utf-8').send(page ? page.body : NOT_BUILT_PAGE);
  };

  void app.register(async (scope) => {
    const hidden = { schema: { hide: true } };
    // Routes for the files present at start; hashed asset names can be cached for good.
    for (const [path, file] of files) {
      if (path === 'index.html') continue;
      const cacheControl = path.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'public, max-age=0';
      scope.get(`/dashboard/${path}`, hidden, async (request, reply) => {
        reply.headers({ 'content-type': file.contentType, etag: file.etag, 'cache-control': cacheControl, 'x-content-type-options': 'nosniff' });
        if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
        return reply.send(file.body);
      });
    }
    scope.get('/dashboard', hidden, async (_request, reply) => reply.redirect('/dashboard/'));
    scope.get('/dashboard/', hidden, async (_request, reply) => sendPage(reply));
    scope.get('/dashboard/*', hidden, async (request, reply) => {
      if (request.url.startsWith('/dashboard/api/') || request.url.startsWith('/dashboard/assets/')) {
        throw new GatewayError('not_found', `Unknown path '${request.url.split('?')[0]}'.`);
      }
      return sendPage(reply);
    });
  });
}
