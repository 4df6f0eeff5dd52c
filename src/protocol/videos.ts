import { z } from 'zod';

/** SPEC "Video generation". */
export const videoRequestSchema = z.looseObject({
  model: z.string().min(1),
  prompt: z.string().min(1).max(32000),
  // A number, or digits as OpenAI takes them ("4", "8", "12"; a form sends nothing else).
  seconds: z
    .union([z.number(), z.string().regex(/^\d{1,3}$/, 'seconds must be a whole number').transform(Number)])
    .pipe(z.number().int().min(1).max(60))
    .nullish(),
  size: z.string().regex(/^\d{2,5}x\d{2,5}$/).nullish(),
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
