import { GatewayError } from '../errors/gateway-error.js';
import type { GatewayCall } from '../pipeline/stage.js';
import { type Guardrail, runsAt } from './guardrail-types.js';
import type { GuardrailStore } from './sql-guardrail-store.js';

/**
 * The guardrails a call runs at one stage: exactly those named in `gw_guardrail_ids` (an unknown or
 * foreign id is a 400), otherwise the org's enabled-by-default ones. Order follows the request's
 * list, else names, so redaction chains are deterministic.
 */
export async function selectGuardrails(store: Pick<GuardrailStore, 'list'>, call: GatewayCall, when: 'pre' | 'post'): Promise<Guardrail[]> {
  const requested = (call.request as { gw_guardrail_ids?: unknown }).gw_guardrail_ids;
  if (Array.isArray(requested) && requested.length === 0) return [];
  return chooseGuardrails(await store.list(call.auth.org.id), requested, when);
}

/**
 * True when the call certainly runs no guardrail at this stage, known without waiting: it asked
 * for none, or it named none and the org's cached list has no default one for the stage.
 */
export function runsNoGuardrails(store: Pick<GuardrailStore, 'peekList'>, call: GatewayCall, when: 'pre' | 'post'): boolean {
  const requested = (call.request as { gw_guardrail_ids?: unknown }).gw_guardrail_ids;
  if (Array.isArray(requested)) return requested.length === 0;
  const all = store.peekList?.(call.auth.org.id);
  return all !== undefined && !all.some((guardrail) => guardrail.enabledByDefault && runsAt(guardrail, when));
}

function chooseGuardrails(all: Guardrail[], requested: unknown, when: 'pre' | 'post'): Guardrail[] {
  if (!Array.isArray(requested)) return all.filter((guardrail) => guardrail.enabledByDefault && runsAt(guardrail, when));
  const byId = new Map(all.map((guardrail) => [guardrail.id, guardrail]));
  const chosen: Guardrail[] = [];
  for (const id of requested) {
    const guardrail = typeof id === 'string' ? byId.get(id) : undefined;
    if (!guardrail) {
      throw new GatewayError('invalid_request', `Unknown guardrail id ${JSON.stringify(id)} in gw_guardrail_ids.`, { param: 'gw_guardrail_ids' });
    }
    if (runsAt(guardrail, when) && !chosen.includes(guardrail)) chosen.push(guardrail);
  }
  return chosen;
}
