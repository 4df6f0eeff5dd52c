import { z } from 'zod';

const SECONDS_EXPECTED = 'expected a whole number of seconds from 1 to 60, as a number or a string of digits such as "8"';

/**
 * A number, or digits as OpenAI takes them ("4", "8", "12"; a form sends nothing else). Every wrong
 * value gets the one message that says what is expected, not zod's account of the union's branches.
 */
const videoSecondsSchema = z.union([z.number(), z.string()], { error: SECONDS_EXPECTED }).transform((value, context) => {
  const seconds = typeof value === 'number' ? value : /^\d{1,3}$/.test(value) ? Number(value) : Number.NaN;
  if (Number.isInteger(seconds) && seconds >= 1 && seconds <= 60) return seconds;
  context.addIssue({ code: 'custom', message: SECONDS_EXPECTED });
  return z.NEVER;
});

/** Why a reference image is refused, as JSON or as a form (http/routes/inference-routes.ts). */
export const VIDEO_REFERENCE_UNSUPPORTED = 'not supported: videos are generated from the prompt alone';

/** SPEC "Video generation". */
export const videoRequestSchema = z
  .looseObject({
    model: z.string().min(1),
    prompt: z.string().min(1).max(32000),
    seconds: videoSecondsSchema.nullish().describe('Whole seconds from 1 to 60, as a number or a string of digits ("4", "8", "12")'),
    size: z.string().regex(/^\d{2,5}x\d{2,5}$/, 'expected WIDTHxHEIGHT in pixels, such as "1280x720"').nullish(),
  })
  // No video upstream here takes a reference image: refused rather than dropped, which would answer
  // as if the video followed it.
  .superRefine((body, context) => {
    if (body.input_reference !== undefined) context.addIssue({ code: 'custom', path: ['input_reference'], message: VIDEO_REFERENCE_UNSUPPORTED });
  });
export type VideoRequest = z.infer<typeof videoRequestSchema>;

export type VideoStatus = 'queued' | 'in_progress' | 'completed' | 'failed';

/** Video record; fields past id/object/status are our extension modelled on OpenAI's videos API. */
export interface VideoRecord {
  id: string;
  object: 'video.generation';
  status: VideoStatus;
  model: string;
  prompt: string;
  seconds: number;
  size: string;
  progress: number;
  created_at: number;
  completed_at: number | null;
  error: { code: string; message: string } | null;
}
