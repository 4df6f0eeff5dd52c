import type { IncomingHttpHeaders } from 'node:http';

/** `Authorization: Bearer <token>`, scheme matched case-insensitively (RFC 9110 §11.1). */
export function bearerToken(request: { readonly headers: IncomingHttpHeaders }): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const space = header.indexOf(' ');
  if (space === -1 || header.slice(0, space).toLowerCase() !== 'bearer') return undefined;
  return header.slice(space + 1).trim() || undefined;
}
