import { z } from 'zod';
import { chatRequestSchema } from '../protocol/chat.js';
import { checkTemplateSource } from './check-template-source.js';

/** Request parameters a template version may set as defaults (the caller's own values win). */
export const TEMPLATE_PARAMETERS = [
  'temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'n', 'stop', 'presence_penalty', 'frequency_penalty',
  'response_format', 'seed', 'tools', 'tool_choice',
] as const;

/**
 * A version's parameters, each checked as the chat endpoint checks the caller's own (range, type):
 * a template is saved once and applied to every call, so a bad value is refused when saved rather
 * than sent upstream on every request.
 */
export const templateParametersSchema = z.strictObject(
  Object.fromEntries(TEMPLATE_PARAMETERS.map((parameter) => [parameter, chatRequestSchema.shape[parameter]])) as {
    [Parameter in (typeof TEMPLATE_PARAMETERS)[number]]: (typeof chatRequestSchema.shape)[Parameter];
  },
);

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
    parameters: templateParametersSchema.nullish(),
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
  parameters: templateParametersSchema.nullish(),
});

export type TemplateVersionInput = z.infer<typeof templateVersionSchema>;
