import type { GatewayError } from '../../errors/gateway-error.js';
import { extractErrorText, upstreamError } from '../http/upstream-error.js';

type Headers = Record<string, string | string[] | undefined>;

/** Converse exception types and their documented HTTP statuses (API_runtime_Converse.html#API_runtime_Converse_Errors). */
const STATUS_BY_EXCEPTION: Record<string, number> = {
  accessdeniedexception: 403,
  validationexception: 400,
  resourcenotfoundexception: 404,
  throttlingexception: 429,
  servicequotaexceededexception: 429,
  modeltimeoutexception: 408,
  modelnotreadyexception: 429,
  modelerrorexception: 424,
  modelstreamerrorexception: 424,
  internalserverexception: 500,
  serviceunavailableexception: 503,
};

/** `x-amzn-errortype: ValidationException:http://internal.amazon.com/…` — only the name before the colon is kept. */
function exceptionName(headers: Headers, body: unknown): string | undefined {
  const header = headers['x-amzn-errortype'];
  const value = Array.isArray(header) ? header[0] : header;
  const fromBody = (body as { __type?: unknown } | undefined)?.__type;
  const raw = value ?? (typeof fromBody === 'string' ? fromBody : undefined);
  return raw?.split(':')[0]?.split('#').pop();
}

export function parseBedrockError(status: number, body: unknown, headers: Headers): GatewayError {
  const { message } = extractErrorText(body);
  const name = exceptionName(headers, body);
  // 424 (the model itself failed) is a server-side failure worth retrying elsewhere.
  const effectiveStatus = status === 424 ? 502 : status;
  const error = upstreamError({ provider: 'bedrock', status: effectiveStatus, message, upstreamType: name, headers });
  if (error.details) error.details.upstream_status = status;
  return error;
}

/** An exception message inside a 200 ConverseStream (`:message-type: exception`). */
export function bedrockStreamException(exceptionType: string, data: string): GatewayError {
  let body: unknown = data;
  try {
    body = JSON.parse(data);
  } catch {
    // plain text payload
  }
  const status = STATUS_BY_EXCEPTION[exceptionType.toLowerCase()] ?? 500;
  return parseBedrockError(status, body, { 'x-amzn-errortype': exceptionType });
}
