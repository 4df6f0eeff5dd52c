import { z } from 'zod';
import type { VideoRecord, VideoRequest, VideoStatus } from '../../protocol/videos.js';
import type { DeploymentTarget } from '../provider.js';
import { parseUpstreamBody } from '../http/parse-upstream-body.js';
import type { OperationTranslator, TranslationContext, UpstreamRequest } from '../http/provider-adapter.js';
import { openaiHeaders, openaiUrl } from './openai-endpoint.js';
import { requestOf } from './translation-request.js';

/**
 * OpenAI's videos API (https://platform.openai.com/docs/api-reference/videos): create a job, poll
 * it, download its content. The create call is the `video` operation translator; polling and
 * download are plain functions for whoever advances the job (the upstream id is in the record).
 */
const videoJobSchema = z.looseObject({
  id: z.string(),
  status: z.string(),
  model: z.string().nullish(),
  progress: z.number().nullish(),
  seconds: z.union([z.string(), z.number()]).nullish(),
  size: z.string().nullish(),
  created_at: z.number().nullish(),
  completed_at: z.number().nullish(),
  error: z.looseObject({ code: z.string().nullish(), message: z.string().nullish() }).nullish(),
});

const STATUSES: ReadonlySet<string> = new Set(['queued', 'in_progress', 'completed', 'failed']);

/** An upstream video job in our record shape; `id` is the upstream job id. */
export function parseVideoJob(body: unknown, model: string, prompt: string, created: number): VideoRecord {
  const job = parseUpstreamBody(videoJobSchema, body, 'openai', 'The openai upstream answered with an unreadable video job');
  const status = (STATUSES.has(job.status) ? job.status : 'in_progress') as VideoStatus;
  return {
    id: job.id,
    object: 'video.generation',
    status,
    model,
    prompt,
    seconds: Number(job.seconds ?? 0),
    size: job.size ?? '',
    progress: job.progress ?? (status === 'completed' ? 100 : 0),
    created_at: job.created_at ?? created,
    completed_at: job.completed_at ?? null,
    error: job.error ? { code: job.error.code ?? 'video_failed', message: job.error.message ?? 'The video generation failed.' } : null,
  };
}

export const openaiVideoTranslator: OperationTranslator<VideoRequest> = {
  buildRequest(request, context) {
    const body: Record<string, unknown> = { model: context.target.upstreamModel, prompt: request.prompt };
    // OpenAI takes seconds as a string ("4", "8", "12").
    if (request.seconds) body.seconds = String(request.seconds);
    if (request.size) body.size = request.size;
    return { method: 'POST', url: openaiUrl(context.target, '/videos'), headers: openaiHeaders(context.target, 'application/json'), body: JSON.stringify(body) };
  },
  parseResponse(body, context) {
    const request = requestOf<VideoRequest>(context);
    const job = parseVideoJob(body, context.model, request?.prompt ?? '', context.created);
    // Charged when the job is accepted, for the seconds the upstream says it will make (the
    // request's own when the answer does not say; the meter's estimate when neither does).
    if (!job.seconds && request?.seconds) job.seconds = request.seconds;
    return { body: job, usage: job.seconds > 0 ? videoUsage(job) : undefined };
  },
};

/** GET /videos/{id}: the job's status and progress. */
export function buildVideoStatusRequest(upstreamId: string, target: DeploymentTarget): UpstreamRequest {
  return { method: 'GET', url: openaiUrl(target, `/videos/${encodeURIComponent(upstreamId)}`), headers: openaiHeaders(target) };
}

/** GET /videos/{id}/content: the MP4 bytes of a completed job. */
export function buildVideoContentRequest(upstreamId: string, target: DeploymentTarget): UpstreamRequest {
  return { method: 'GET', url: openaiUrl(target, `/videos/${encodeURIComponent(upstreamId)}/content`), headers: openaiHeaders(target) };
}

/** What a job is billed for: its seconds of video. */
export function videoUsage(record: VideoRecord): { videoSeconds: number } {
  return { videoSeconds: record.seconds };
}

export type { TranslationContext };
