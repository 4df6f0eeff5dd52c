import type { GatewayCall, Next, Outcome, Stage } from '../pipeline/stage.js';
import { type GuardrailRunDeps, runGuardrails } from './run-guardrails.js';
import { runsNoGuardrails, selectGuardrails } from './select-guardrails.js';
import type { GuardrailStore } from './sql-guardrail-store.js';
import { admitted } from '../pipeline/admission.js';

export interface GuardrailStageDeps extends GuardrailRunDeps {
  store: Pick<GuardrailStore, 'list' | 'peekList'>;
}

type Message = { content?: unknown; [field: string]: unknown };
type Slot = { message: number; part: number | null };

/**
 * Pre-call guardrails on chat requests: checks every message's text (string content and text
 * parts, all roles: template output includes caller variables, so nothing is trusted), blocks or
 * redacts, and names what ran in x-gw-guardrails-applied. Runs before metering, so a block is free.
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
    call.record.headers['x-gw-guardrails-applied'] = guardrails.map((guardrail) => guardrail.name).join(',');
    const messages = ((call.request as { messages?: Message[] }).messages ?? []) as Message[];
    const { texts, slots } = collectTexts(messages);
    const result = await runGuardrails(guardrails, texts, call, 'pre', deps);
    if (!result.changed) return next(call);
    const request = { ...call.request, messages: replaceTexts(messages, slots, result.texts) };
    return next({ ...call, request });
  }
}

function collectTexts(messages: Message[]): { texts: string[]; slots: Slot[] } {
  const texts: string[] = [];
  const slots: Slot[] = [];
  messages.forEach((message, messageIndex) => {
    if (typeof message.content === 'string') {
      texts.push(message.content);
      slots.push({ message: messageIndex, part: null });
    } else if (Array.isArray(message.content)) {
      message.content.forEach((part: unknown, partIndex) => {
        const text = (part as { type?: unknown; text?: unknown }).text;
        if ((part as { type?: unknown }).type === 'text' && typeof text === 'string') {
          texts.push(text);
          slots.push({ message: messageIndex, part: partIndex });
        }
      });
    }
  });
  return { texts, slots };
}

function replaceTexts(messages: Message[], slots: Slot[], texts: string[]): Message[] {
  const copy = messages.map((message) => (Array.isArray(message.content) ? { ...message, content: [...message.content] } : { ...message }));
  slots.forEach((slot, index) => {
    const message = copy[slot.message];
    if (slot.part === null) message.content = texts[index];
    else (message.content as unknown[])[slot.part] = { ...((message.content as unknown[])[slot.part] as object), text: texts[index] };
  });
  return copy;
}
