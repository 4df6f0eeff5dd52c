export const COHERE_BASE_URL = 'https://api.cohere.com';

/** `{base}/v2/{path}`; a base given with its /v1 or /v2 suffix is accepted too. */
export function cohereUrl(baseUrl: string | undefined, path: string): string {
  const base = (baseUrl ?? COHERE_BASE_URL).replace(/\/+$/, '').replace(/\/v[12]$/, '');
  return `${base}/v2/${path}`;
}

export function cohereHeaders(apiKey: string | undefined): Record<string, string> {
  return { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${apiKey ?? ''}` };
}
