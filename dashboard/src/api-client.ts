/** An error from the gateway, in words a person can act on. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined,
  ) {
    super(message);
  }
  /** The gateway has no such endpoint (a feature not installed in this build). */
  get unavailable(): boolean {
    return this.status === 404 && this.message.startsWith('Unknown endpoint');
  }
}

export interface Session {
  scope: 'master' | 'org';
  orgId: string | null;
  csrfToken: string;
}

export interface ApiClient {
  get<T>(path: string, query?: Record<string, string | number | undefined>): Promise<T>;
  send<T>(method: 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T>;
}

function messageFor(status: number, body: unknown): { message: string; code?: string } {
  const error = (body as { error?: { message?: string; code?: string } } | undefined)?.error;
  if (error?.message) return { message: error.message, code: error.code };
  if (status === 0) return { message: 'The gateway could not be reached. Check that it is running.' };
  return { message: `The gateway answered with HTTP ${status}.` };
}

export function withQuery(path: string, query: Record<string, string | number | undefined> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text ? `${path}${path.includes('?') ? '&' : '?'}${text}` : path;
}

/**
 * Calls the gateway's JSON API with the session cookie. State-changing calls carry the CSRF token;
 * `orgId` (a master session's chosen org) goes along so org-scoped endpoints know which org is meant.
 */
export function createApiClient(session: Session, orgId: string | undefined, onSignedOut: () => void): ApiClient {
  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (method !== 'GET') headers['x-csrf-token'] = session.csrfToken;
    if (orgId) headers['x-gw-dashboard-org'] = orgId;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
    } catch {
      throw new ApiError(messageFor(0, undefined).message, 0, undefined);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!response.ok) {
      const { message, code } = messageFor(response.status, parsed);
      if (response.status === 401) onSignedOut();
      throw new ApiError(message, response.status, code);
    }
    return parsed as T;
  }
  return {
    get: (path, query) => call('GET', withQuery(path, query)),
    send: (method, path, body) => call(method, path, body),
  };
}

/** Session endpoints, used before a client exists. */
export async function fetchSession(): Promise<Session | undefined> {
  const response = await fetch('/dashboard/api/session', { credentials: 'same-origin' });
  if (!response.ok) return undefined;
  const body = (await response.json()) as { scope: 'master' | 'org'; org_id: string | null; csrf_token: string };
  return { scope: body.scope, orgId: body.org_id, csrfToken: body.csrf_token };
}

export async function signIn(credential: string): Promise<Session> {
  const response = await fetch('/dashboard/api/session', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ credential }),
  });
  const body = (await response.json().catch(() => undefined)) as { scope: 'master' | 'org'; org_id: string | null; csrf_token: string } | undefined;
  if (!response.ok || !body) {
    const { message, code } = messageFor(response.status, body);
    throw new ApiError(response.status === 401 ? 'That credential was not accepted. Use the master credential or an org-admin key.' : message, response.status, code);
  }
  return { scope: body.scope, orgId: body.org_id, csrfToken: body.csrf_token };
}

export async function signOut(session: Session): Promise<void> {
  await fetch('/dashboard/api/session', { method: 'DELETE', credentials: 'same-origin', headers: { 'x-csrf-token': session.csrfToken } });
}
