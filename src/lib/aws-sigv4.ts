import { createHash, createHmac } from 'node:crypto';

/**
 * AWS Signature Version 4 for request headers
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html). Pure: the clock
 * is a parameter, so the same inputs always give the same signature (tested with AWS's published
 * test-suite vectors).
 */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SigV4Scope {
  region: string;
  service: string;
}

export interface SignableRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer | Uint8Array;
}

const sha256Hex = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 unreserved characters stay; everything else is %XX (uppercase), as SigV4 requires. */
export function uriEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** `20150830T123600Z` */
export function amzDate(now: Date): string {
  return now.toISOString().replace(/[:-]|\.\d{3}/g, '');
}

/** Each path segment URI-encoded once more, as every service but S3 expects. */
function canonicalPath(pathname: string): string {
  if (pathname === '' || pathname === '/') return '/';
  return pathname
    .split('/')
    .map((segment) => uriEncode(segment))
    .join('/');
}

function canonicalQuery(search: URLSearchParams): string {
  return [...search.entries()]
    .map(([key, value]) => [uriEncode(key), uriEncode(value)] as const)
    .sort(([leftKey, leftValue], [rightKey, rightValue]) =>
      leftKey === rightKey ? (leftValue < rightValue ? -1 : leftValue > rightValue ? 1 : 0) : leftKey < rightKey ? -1 : 1,
    )
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
}

export function signingKey(secretAccessKey: string, dateStamp: string, scope: SigV4Scope): Buffer {
  const dateKey = hmac(`AWS4${secretAccessKey}`, dateStamp);
  const regionKey = hmac(dateKey, scope.region);
  const serviceKey = hmac(regionKey, scope.service);
  return hmac(serviceKey, 'aws4_request');
}

/**
 * Returns the request with `x-amz-date`, `x-amz-security-token` (temporary credentials) and
 * `authorization` added. Every header of the request is signed, plus `host` (taken from the URL,
 * which is what the HTTP client will send, and not added to the returned headers).
 */
export function signRequest<T extends SignableRequest>(
  request: T,
  credentials: AwsCredentials,
  scope: SigV4Scope,
  now: Date,
): Omit<T, 'headers'> & { headers: Record<string, string> } {
  const url = new URL(request.url);
  const date = amzDate(now);
  const dateStamp = date.slice(0, 8);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
  headers['x-amz-date'] = date;
  if (credentials.sessionToken) headers['x-amz-security-token'] = credentials.sessionToken;

  const signed: Record<string, string> = { ...headers, host: url.host };
  delete signed.authorization;
  const names = Object.keys(signed).sort();
  const canonicalHeaders = names.map((name) => `${name}:${signed[name].trim().replace(/\s+/g, ' ')}\n`).join('');
  const signedHeaders = names.join(';');
  const payloadHash = sha256Hex(request.body ?? '');
  const canonicalRequest = [
    request.method.toUpperCase(),
    canonicalPath(url.pathname),
    canonicalQuery(url.searchParams),
    canonicalHeaders,
    signedHeaders,
    payloadHash,
  ].join('\n');
  const credentialScope = `${dateStamp}/${scope.region}/${scope.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', date, credentialScope, sha256Hex(canonicalRequest)].join('\n');
  const signature = createHmac('sha256', signingKey(credentials.secretAccessKey, dateStamp, scope)).update(stringToSign).digest('hex');
  headers.authorization =
    `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${credentialScope}, ` +
    `SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return { ...request, headers };
}
