import { z } from 'zod';
import { checkTemplateSource } from './check-template-source.js';

/** Request parameters a template version may set as defaults (the caller's own values win). */
export const TEMPLATE_PARAMETERS = [
  'temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'n', 'stop', 'presence_penalty', 'frequency_penalty',
  'response_format', 'seed', 'tools', 'tool_choice',
] as const;

const templateMessageSchema = z.strictObject({
  role: z.enum(['system', 'user', 'assistant', 'developer']),
  content: z.string().min(1).max(100_000),
  name: z.string().max(64).optional(),
});

/** One version's content, checked for template safety when saved (so a bad template never reaches a request). */
export const templateVersionSchema = z
  .strictObject({
    messages: z.array(templateMessageSchema).min(1).max(100),
    model: z.string().min(1).max(200).nullish(),
    parameters: z.record(z.enum(TEMPLATE_PARAMETERS), z.unknown()).nullish(),
  })
  .superRefine((version, context) => {
    version.messages.forEach((message, index) => {
      try {
        checkTemplateSource(message.content);
      } catch (error) {
        context.addIssue({ code: 'custom', path: ['messages', index, 'content'], message: error instanceof Error ? error.message : String(error) });
      }
    });
  });

export const templateCreateSchema = z.strictObject({
  org_id: z.string().min(1).optional(),
  name: z.string().trim().min(1).max(100),
  description: z.string().max(1000).nullish(),
  messages: templateVersionSchema.shape.messages,
  model: z.string().min(1).max(200).nullish(),
  parameters: z.record(z.enum(TEMPLATE_PARAMETERS), z.unknown()).nullish(),
});

export type TemplateVersionInput = z.infer<typeof templateVersionSchema>;
