import { GatewayError, isGatewayError } from '../errors/gateway-error.js';
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
  /** Logs what an operator should see but is no guardrail decision (a webhook guardrail that failed). */
  warn?: (context: Record<string, unknown>, message: string) => void;
  now?: () => number;
}

/**
 * Runs guardrails in order over the texts; a redaction feeds the next guardrail the redacted text.
 * Every trigger is logged and published. A block throws 400 guardrail_blocked naming the guardrail,
 * so nothing after this point (upstream call, metering) happens. A webhook guardrail that could not
 * decide is no block: a failed one throws 503 service_unavailable (retryable; logged as a warning,
 * not in the guardrail log), a cancelled call throws its cancellation.
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
    if (outcome.unanswered) throw unansweredError(guardrail, outcome.unanswered, call, stage, deps);
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

function unansweredError(
  guardrail: Guardrail,
  unanswered: { cancelled: boolean; cause: unknown },
  call: GatewayCall,
  stage: 'pre' | 'post',
  deps: GuardrailRunDeps,
): GatewayError {
  if (unanswered.cancelled) {
    // The edge aborts with the error the call ends with (client gone, time cap): keep it.
    const reason: unknown = call.signal.reason;
    if (isGatewayError(reason)) return reason;
    return new GatewayError('service_unavailable', 'The request was cancelled while a guardrail was being checked.', { cause: unanswered.cause });
  }
  deps.warn?.(
    {
      err: unanswered.cause,
      org_id: call.auth.org.id,
      guardrail_id: guardrail.id,
      guardrail_name: guardrail.name,
      request_id: call.requestId,
      stage,
    },
    'guardrail webhook failed; the call is refused as unavailable',
  );
  return new GatewayError(
    'service_unavailable',
    `The guardrail "${guardrail.name}" could not be checked (its webhook failed); the ${stage === 'pre' ? 'request was not sent' : 'answer was withheld'}. Retry shortly.`,
    { details: { guardrail_name: guardrail.name, guardrail_id: guardrail.id }, cause: unanswered.cause },
  );
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
