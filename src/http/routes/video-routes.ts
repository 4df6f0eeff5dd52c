import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.js';
import type { VideoJobBackend } from '../../videos/video-job-backend.js';
import { videoRecordOf, type VideoStore } from '../../videos/video-store.js';
import type { DeploymentTarget } from '../../providers/provider.js';
import type { ManagementAuth } from '../management-auth.js';
import { pathParam } from '../path-param.js';

export interface VideoRoutesDependencies {
  auth: ManagementAuth;
  store: VideoStore;
  backends: ReadonlyMap<string, VideoJobBackend>;
  targetOf(deploymentId: string): DeploymentTarget | undefined;
}

/**
 * Our extension, modelled on OpenAI's videos API: GET /v1/videos/{id} (status queued → in_progress →
 * completed | failed, with progress and error) and GET /v1/videos/{id}/content (the MP4 bytes).
 */
export function registerVideoRoutes(app: FastifyInstance, dependencies: VideoRoutesDependencies): void {
  const schema = { tags: ['Video'], security: [{ bearerAuth: [] }] };
  const load = async (request: Parameters<ManagementAuth['requireKey']>[0]) => {
    const auth = await dependencies.auth.requireKey(request);
    const id = pathParam(request.params, 'id');
    const job = await dependencies.store.get(id);
    // Another org's video is reported as missing, not forbidden: ids reveal nothing.
    if (!job || job.org_id !== auth.org.id) throw new GatewayError('not_found', `No video with id '${id}'.`);
    return job;
  };

  app.get('/v1/videos/:id', { schema }, async (request) => videoRecordOf(await load(request)));

  app.get('/v1/videos/:id/content', { schema }, async (request, reply) => {
    const job = await load(request);
    if (job.status !== 'completed') {
      throw new GatewayError('invalid_request', `The video is not ready (status ${job.status}); poll GET /v1/videos/${job.id}.`);
    }
    const backend = dependencies.backends.get(job.provider);
    const target = dependencies.targetOf(job.deployment_id);
    if (!backend || !target) throw new GatewayError('upstream_unavailable', 'The deployment that made this video is no longer configured.');
    const content = await backend.content(job.upstream_job_id, target);
    reply.header('content-type', content.contentType);
    return reply.send(Buffer.from(content.bytes));
  });
}
