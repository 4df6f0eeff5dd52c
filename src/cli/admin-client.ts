/** A small client for the admin REST API, used by the `gw` CLI. */
export interface AdminClient {
  request<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
}

export function createAdminClient(baseUrl: string, credential: string): AdminClient {
  return {
    async request(method, path, body) {
      const response = await fetch(baseUrl.replace(/\/+$/, '') + path, {
        method,
        headers: { authorization: `Bearer ${credential}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      const parsed = text ? JSON.parse(text) : undefined;
      if (!response.ok) {
        const message = parsed?.error?.message ?? `HTTP ${response.status}`;
        throw new Error(`${method} ${path} failed (${response.status}): ${message}`);
      }
      return parsed;
    },
  };
}
