import type { GatewayCall, Next, Outcome, Stage } from '../pipeline/stage.js';
import { type GuardrailRunDeps, runGuardrails } from './run-guardrails.js';
import { runsNoGuardrails, selectGuardrails } from './select-guardrails.js';
import type { GuardrailStore } from './sql-guardrail-store.js';
import { admitted } from '../pipeline/admission.js';
import { forgetJsonText } from '../lib/json-source-text.js';
import { addStringsWithin, addText, emptySlots, fieldsOf, listOf, replaceTexts, type TextSlots } from './text-slots.js';

export interface GuardrailStageDeps extends GuardrailRunDeps {
  store: Pick<GuardrailStore, 'list' | 'peekList'>;
}

/**
 * Pre-call guardrails on chat requests: checks every text that goes upstream (requestTexts below;
 * all roles: template output includes caller variables, and a client writes the assistant turns it
 * sends back too, so nothing is trusted), blocks or redacts, and names what ran in
 * x-gw-guardrails-applied. Runs before metering, so a block is free.
 */
export function createInputGuardrailStage(deps: GuardrailStageDeps): Stage {
  return {
    name: 'inputGuardrails',
    run(call, next) {
      if (call.operation !== 'chat' || runsNoGuardrails(deps.store, call, 'pre')) return next(call);
      return checkInput(call, next);
    },
  };

  async function checkInput(call: GatewayCall, next: Next): Promise<Outcome> {
    // Guardrails may call out and are logged: only for admitted calls.
    await admitted(call);
    const guardrails = await selectGuardrails(deps.store, call, 'pre');
    if (guardrails.length === 0) return next(call);
    // What the guardrails pass is what the upstream gets: the body is encoded from the object they
    // checked, never forwarded as the client's text (which could, say, repeat a key a parser other
    // than JSON.parse reads differently).
    forgetJsonText(call.request);
    call.record.headers['x-gw-guardrails-applied'] = guardrails.map((guardrail) => guardrail.name).join(',');
    const slots = requestTexts(call.request);
    const result = await runGuardrails(guardrails, slots.texts, call, 'pre', deps);
    if (!result.changed) return next(call);
    const request = replaceTexts(call.request, slots, result.texts);
    call.record.guardedRequest = request;
    return next({ ...call, request });
  }
}

/**
 * Every text of a chat request that reaches the model: each message's content (strings, text and
 * refusal parts), `name`, `refusal`, and the arguments of the function calls an assistant turn
 * carries (`tool_calls[].function.arguments`, legacy `function_call.arguments`); and each tool's
 * (or legacy function's) description and the strings in its parameter schema. Arguments are
 * checked as the JSON text they are, so a redaction lands inside that string.
 */
export function requestTexts(request: Record<string, unknown>): TextSlots {
  const slots = emptySlots();
  listOf(request.messages).forEach((entry, messageIndex) => {
    const message = fieldsOf(entry);
    if (!message) return;
    const at = ['messages', messageIndex];
    if (Array.isArray(message.content)) {
      message.content.forEach((part, partIndex) => {
        const fields = fieldsOf(part);
        if (fields?.type === 'text') addText(slots, fields.text, [...at, 'content', partIndex, 'text']);
        else if (fields?.type === 'refusal') addText(slots, fields.refusal, [...at, 'content', partIndex, 'refusal']);
      });
    } else addText(slots, message.content, [...at, 'content']);
    addText(slots, message.name, [...at, 'name']);
    addText(slots, message.refusal, [...at, 'refusal']);
    listOf(message.tool_calls).forEach((toolCall, callIndex) => {
      addText(slots, fieldsOf(fieldsOf(toolCall)?.function)?.arguments, [...at, 'tool_calls', callIndex, 'function', 'arguments']);
    });
    addText(slots, fieldsOf(message.function_call)?.arguments, [...at, 'function_call', 'arguments']);
  });
  listOf(request.tools).forEach((tool, toolIndex) => {
    const definition = fieldsOf(fieldsOf(tool)?.function);
    addText(slots, definition?.description, ['tools', toolIndex, 'function', 'description']);
    addStringsWithin(slots, definition?.parameters, ['tools', toolIndex, 'function', 'parameters']);
  });
  listOf(request.functions).forEach((entry, functionIndex) => {
    const definition = fieldsOf(entry);
    addText(slots, definition?.description, ['functions', functionIndex, 'description']);
    addStringsWithin(slots, definition?.parameters, ['functions', functionIndex, 'parameters']);
  });
  return slots;
}
