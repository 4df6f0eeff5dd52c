import { GatewayError } from '../errors/gateway-error.js';
import { newId } from '../lib/ids.js';
import type { VideoRecord } from '../protocol/videos.js';
import type { Stage } from '../pipeline/stage.js';
import { videoRecordOf, type VideoStore } from './video-store.js';

/**
 * Persists a video job once the routed provider accepted it, and answers our own record (id,
 * object video.generation, status queued). The job runner advances it from then on, on whichever
 * instance holds the runner's lease. Runs inside the meter stage: a job that cannot be stored fails
 * the call, whose hold is then released rather than charged.
 */
export function createVideoStage(store: VideoStore, now: () => number = Date.now): Stage {
  return {
    name: 'video-job',
    async run(call, next) {
      const outcome = await next(call);
      if (outcome.kind !== 'json') throw new GatewayError('upstream_bad_response', 'The provider did not return a video job.');
      const upstream = outcome.body as VideoRecord;
      if (!call.record.deploymentId || !call.record.provider) throw new GatewayError('internal_error', 'The video job has no deployment.');
      const time = now();
      const job = {
        id: `video_${newId().replace(/-/g, '')}`,
        org_id: call.auth.org.id,
        key_id: call.auth.key.id,
        model: call.model,
        deployment_id: call.record.deploymentId,
        provider: call.record.provider,
        upstream_job_id: upstream.id,
        status: 'queued',
        progress: 0,
        prompt: upstream.prompt,
        seconds: upstream.seconds,
        size: upstream.size,
        error: null,
        created_at: time,
        completed_at: null,
        updated_at: time,
        // What a refund needs if the job fails later (video-refunds.ts): the meter charges this
        // request, under its id, to these accounts once the stage has answered.
        request_id: call.requestId,
        spend_accounts: call.record.spendAccounts ? JSON.stringify(call.record.spendAccounts) : null,
        refunded_at: null,
        refund_nanos: null,
      };
      await store.insert(job);
      return { kind: 'json', body: videoRecordOf(job), usage: outcome.usage };
    },
  };
}
