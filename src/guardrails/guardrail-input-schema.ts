import { z } from 'zod';
import { assertSafeRegex } from './assert-safe-regex.js';
import { GUARDRAIL_ACTIONS, GUARDRAIL_KINDS, GUARDRAIL_STAGES, type GuardrailKind, guardrailConfigSchemas } from './guardrail-types.js';

/** Body of POST /api/admin/guardrails. */
const guardrailName = z.string().trim().min(1).max(100).regex(/^[^,]+$/, 'a guardrail name must not contain commas (headers list names comma-separated)');

export const guardrailCreateSchema = z.strictObject({
  org_id: z.string().min(1).optional(),
  name: guardrailName,
  kind: z.enum(GUARDRAIL_KINDS),
  stage: z.enum(GUARDRAIL_STAGES).default('pre'),
  action: z.enum(GUARDRAIL_ACTIONS).default('block'),
  enabled_by_default: z.boolean().default(true),
  config: z.record(z.string(), z.unknown()).default({}),
});

/** Body of PATCH /api/admin/guardrails/:id: only what is sent changes (no defaults), and the kind is fixed. */
export const guardrailUpdateSchema = z.strictObject({
  name: guardrailName.optional(),
  stage: z.enum(GUARDRAIL_STAGES).optional(),
  action: z.enum(GUARDRAIL_ACTIONS).optional(),
  enabled_by_default: z.boolean().optional(),
  config: z.record(z.string(), z.unknown()).optional(),
});

export type GuardrailCreateInput = z.infer<typeof guardrailCreateSchema>;
export type GuardrailUpdateInput = z.infer<typeof guardrailUpdateSchema>;

/**
 * Validates a kind's config and returns it normalised. Custom patterns must pass the
 * backtracking admission check. Throws a zod error or a GatewayError.
 */
export function parseGuardrailConfig(kind: GuardrailKind, config: unknown): Record<string, unknown> {
  const parsed = guardrailConfigSchemas[kind].parse(config ?? {}) as Record<string, unknown>;
  if (kind === 'regex') {
    const flags = parsed.case_insensitive === true ? 'gi' : 'g';
    for (const pattern of parsed.patterns as string[]) assertSafeRegex(pattern, flags);
  }
  return parsed;
}
