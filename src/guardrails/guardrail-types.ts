import { z } from 'zod';

export const GUARDRAIL_KINDS = ['pii', 'prompt_injection', 'secrets', 'regex', 'deny_list', 'webhook'] as const;
export type GuardrailKind = (typeof GUARDRAIL_KINDS)[number];

export const GUARDRAIL_STAGES = ['pre', 'post', 'both'] as const;
export type GuardrailStage = (typeof GUARDRAIL_STAGES)[number];

export const GUARDRAIL_ACTIONS = ['block', 'redact'] as const;
export type GuardrailAction = (typeof GUARDRAIL_ACTIONS)[number];

export const PII_TYPES = ['email', 'phone', 'credit_card', 'iban', 'ssn', 'ip_address'] as const;
export type PiiType = (typeof PII_TYPES)[number];

/** Per-kind settings, validated when a guardrail is created or updated. */
export const guardrailConfigSchemas = {
  pii: z.strictObject({ types: z.array(z.enum(PII_TYPES)).min(1).optional() }),
  prompt_injection: z.strictObject({ threshold: z.number().min(0.05).max(10).optional() }),
  secrets: z.strictObject({ high_entropy: z.boolean().optional() }),
  regex: z.strictObject({
    patterns: z.array(z.string().min(1).max(500)).min(1).max(50),
    case_insensitive: z.boolean().optional(),
    label: z.string().regex(/^[a-z0-9_]{1,40}$/).optional(),
  }),
  deny_list: z.strictObject({
    terms: z.array(z.string().min(1).max(200)).min(1).max(1000),
    whole_words: z.boolean().optional(),
    label: z.string().regex(/^[a-z0-9_]{1,40}$/).optional(),
  }),
  webhook: z.strictObject({
    url: z.url().refine((url) => url.startsWith('https://'), 'the webhook url must be https'),
    timeout_ms: z.number().int().min(100).max(10_000).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    /** When the endpoint cannot be reached: false (default) blocks, true lets the text through. */
    fail_open: z.boolean().optional(),
  }),
} as const;

export type GuardrailConfig = Record<string, unknown>;

/** An org-level guardrail definition. */
export interface Guardrail {
  id: string;
  orgId: string;
  name: string;
  kind: GuardrailKind;
  stage: GuardrailStage;
  action: GuardrailAction;
  enabledByDefault: boolean;
  config: GuardrailConfig;
  createdAt: number;
  updatedAt: number;
}

/** A span of text a detector flagged; `type` names the placeholder (`[REDACTED_EMAIL]`). */
export interface Finding {
  start: number;
  end: number;
  type: string;
}

export function runsAt(guardrail: Pick<Guardrail, 'stage'>, when: 'pre' | 'post'): boolean {
  return guardrail.stage === 'both' || guardrail.stage === when;
}
