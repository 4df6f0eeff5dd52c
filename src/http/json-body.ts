import { GatewayError } from '../errors/gateway-error.js';

/**
 * A JSON request body as the handlers receive it, or the 400 the client gets instead. Shared by
 * Fastify's content-type parser and the direct JSON routes (direct-json-routes.ts), so both
 * answer a bad body alike.
 */
export function parseJsonBody(text: string): unknown {
  if (text === '') throw new GatewayError('invalid_request', 'The request body is empty; send a JSON object.');
  try {
    // The reviver costs time; only bodies that mention __proto__ pay it.
    return text.includes('"__proto__"') ? JSON.parse(text, rejectPrototypeKeys) : JSON.parse(text);
  } catch {
    throw new GatewayError('invalid_request', 'The request body is not valid JSON.');
  }
}

/** JSON.parse reviver: drops keys that could pollute prototypes if a body were ever merged into an object. */
function rejectPrototypeKeys(key: string, value: unknown): unknown {
  if (key === '__proto__') return undefined;
  return value;
}
