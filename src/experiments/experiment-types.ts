import { z } from 'zod';
import { TEMPLATE_PARAMETERS } from '../templates/template-input-schema.js';

export const variantSchema = z.strictObject({
  name: z.string().trim().min(1).max(64).regex(/^[^,:]+$/, 'variant names must not contain ":" or ","'),
  weight: z.number().positive().max(1_000_000),
  model: z.string().min(1).max(200).optional(),
  template_version: z.number().int().min(1).optional(),
  /** Request parameters this variant sets (they override the caller's: that is what is being tested). */
  parameters: z.record(z.enum(TEMPLATE_PARAMETERS), z.unknown()).optional(),
});

export type Variant = z.infer<typeof variantSchema>;

const variantsSchema = z
  .array(variantSchema)
  .min(2)
  .max(20)
  .refine((variants) => new Set(variants.map((variant) => variant.name)).size === variants.length, 'variant names must be unique');

export const experimentCreateSchema = z
  .strictObject({
    org_id: z.string().min(1).optional(),
    name: z.string().trim().min(1).max(100).regex(/^[^,:]+$/, 'experiment names must not contain ":" or ","'),
    target_kind: z.enum(['model', 'template']),
    /** A public model id, or a prompt template id. */
    target: z.string().min(1).max(200),
    variants: variantsSchema,
    status: z.enum(['active', 'paused']).default('active'),
  })
  .superRefine((experiment, context) => {
    if (experiment.target_kind === 'model' && experiment.variants.some((variant) => variant.template_version !== undefined)) {
      context.addIssue({ code: 'custom', path: ['variants'], message: 'template_version applies only to template experiments' });
    }
    if (experiment.target_kind === 'template' && !z.uuid().safeParse(experiment.target).success) {
      context.addIssue({ code: 'custom', path: ['target'], message: 'a template experiment targets a prompt template id (UUID)' });
    }
  });

export const experimentUpdateSchema = z.strictObject({
  name: z.string().trim().min(1).max(100).regex(/^[^,:]+$/).optional(),
  variants: variantsSchema.optional(),
  status: z.enum(['active', 'paused']).optional(),
});

export interface Experiment {
  id: string;
  orgId: string;
  name: string;
  targetKind: 'model' | 'template';
  target: string;
  variants: Variant[];
  status: 'active' | 'paused';
  createdAt: number;
  updatedAt: number;
}

export interface VariantStats {
  variant: string;
  calls: number;
  errors: number;
  latencyMsTotal: number;
  promptTokens: number;
  completionTokens: number;
  costNanos: number;
}
