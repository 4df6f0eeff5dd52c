import { GatewayError } from '../errors/gateway-error.js';
import type { EventBus } from '../lib/event-bus.js';
import type { GatewayCall } from '../pipeline/stage.js';
import { evaluateGuardrail } from './evaluate-guardrail.js';
import type { GuardedPost } from './guardrail-webhook.js';
import type { Guardrail } from './guardrail-types.js';
import { type GuardrailLogEntry, newLogId } from './sql-guardrail-store.js';

export interface GuardrailRunDeps {
  eventBus: EventBus;
  /** Takes log entries without waiting (a batch writer); never awaited on the request path. */
  logWriter: { add(entry: GuardrailLogEntry): void };
  /** SSRF-guarded POST for webhook guardrails. */
  post?: GuardedPost;
  now?: () => number;
}

/**
 * Runs guardrails in order over the texts; a redaction feeds the next guardrail the redacted text.
 * Every trigger is logged and published. A block throws 400 guardrail_blocked naming the guardrail,
 * so nothing after this point (upstream call, metering) happens.
 */
export async function runGuardrails(
  guardrails: readonly Guardrail[],
  texts: string[],
  call: GatewayCall,
  stage: 'pre' | 'post',
  deps: GuardrailRunDeps,
): Promise<{ texts: string[]; changed: boolean }> {
  let current = texts;
  let changed = false;
  for (const guardrail of guardrails) {
    const outcome = await evaluateGuardrail(guardrail, current, { stage, post: deps.post, signal: call.signal });
    if (!outcome.triggered) continue;
    const blocked = outcome.forceBlock === true || guardrail.action === 'block';
    report(guardrail, call, stage, blocked, outcome.types, outcome.reason, deps);
    if (blocked) {
      throw new GatewayError('guardrail_blocked', `Blocked by guardrail "${guardrail.name}": ${outcome.reason ?? 'content not allowed'}.`, {
        details: { guardrail_name: guardrail.name, guardrail_id: guardrail.id },
      });
    }
    current = outcome.texts;
    changed = true;
  }
  return { texts: current, changed };
}

function report(
  guardrail: Guardrail,
  call: GatewayCall,
  stage: 'pre' | 'post',
  blocked: boolean,
  types: string[],
  reason: string | undefined,
  deps: GuardrailRunDeps,
): void {
  const time = (deps.now ?? Date.now)();
  call.record.guardrailsTriggered = [...(call.record.guardrailsTriggered ?? []), guardrail.name];
  const keyAlias = call.auth.key.alias;
  try {
    deps.logWriter.add({
      id: newLogId(),
      orgId: call.auth.org.id,
      guardrailId: guardrail.id,
      guardrailName: guardrail.name,
      kind: guardrail.kind,
      stage,
      action: blocked ? 'blocked' : 'redacted',
      requestId: call.requestId,
      keyId: call.auth.key.id,
      keyAlias,
      model: call.model,
      findingTypes: types,
      reason: reason ?? null,
      createdAt: time,
    });
  } catch {
    // A closed or full log writer must not turn a guardrail decision into a 500.
  }
  deps.eventBus.publish({
    kind: 'guardrail.triggered',
    orgId: call.auth.org.id,
    severity: blocked ? 'HIGH' : 'WARNING',
    title: `Guardrail ${guardrail.name} ${blocked ? 'blocked' : 'redacted'} a ${stage === 'pre' ? 'request' : 'response'}`,
    message: `Guardrail "${guardrail.name}" (${guardrail.kind}) ${blocked ? 'blocked' : 'redacted'} content${types.length ? ` (${types.join(', ')})` : ''} on request ${call.requestId}.`,
    details: {
      org_id: call.auth.org.id,
      guardrail_name: guardrail.name,
      guardrail_id: guardrail.id,
      request_id: call.requestId,
      key_alias: keyAlias,
      model: call.model,
      action: blocked ? 'block' : 'redact',
      stage,
    },
    occurredAt: time,
  });
}
