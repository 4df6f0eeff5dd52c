/**
 * The gateway's root address, derived from the client's base URL: /v1 holds the model endpoints,
 * while /api/... and /gw/... sit beside it without a version segment (SPEC "Versioning").
 */
export function gatewayRoot(baseURL: string): string {
  return baseURL.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** An absolute URL under the gateway root; the SDK sends absolute paths as they are. */
export function rootUrl(baseURL: string, path: string): string {
  return `${gatewayRoot(baseURL)}${path.startsWith('/') ? path : `/${path}`}`;
}
