import { z } from 'zod';

/** The spec's `gw_*` extra body fields (SPEC "Chat completion request"). They never reach an upstream. */
export const gwRequestExtras = z.object({
  gw_guardrail_ids: z.array(z.uuid()).nullish(),
  gw_cache: z.boolean().nullish(),
  gw_prompt_template_id: z.uuid().nullish(),
  gw_prompt_variables: z.record(z.string(), z.unknown()).nullish(),
  /** Our extension: pin a template version instead of the latest. */
  gw_prompt_version: z.number().int().min(1).nullish(),
});

export type GwRequestExtras = z.infer<typeof gwRequestExtras>;

export const GW_EXTRA_FIELDS = Object.keys(gwRequestExtras.shape) as ReadonlyArray<keyof GwRequestExtras>;

/** Returns a copy of a request body without the gw_* fields, for forwarding upstream. */
export function withoutGwExtras<T extends Record<string, unknown>>(body: T): T {
  let copy: Record<string, unknown> | undefined;
  for (const field of GW_EXTRA_FIELDS) {
    if (field in body) {
      copy ??= { ...body };
      delete copy[field];
    }
  }
  return (copy ?? body) as T;
}
