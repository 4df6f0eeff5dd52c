import { GatewayError } from '../errors/gateway-error.js';
import type { VideoStatus } from '../protocol/videos.js';
import type { DeploymentTarget } from '../providers/provider.js';
import type { LocalVideoBackend } from '../providers/local/local-video-backend.js';
import type { UpstreamClient } from '../providers/http/upstream-client.js';
import type { UpstreamRequest } from '../providers/http/provider-adapter.js';
import { buildVideoContentRequest, buildVideoStatusRequest, parseVideoJob } from '../providers/openai/openai-video-translator.js';
import { parseOpenAIError } from '../providers/http/upstream-error.js';

export interface VideoJobState {
  status: VideoStatus;
  progress: number;
  error?: { code: string; message: string } | null;
}

/** How the job runner advances and downloads a job at one provider. */
export interface VideoJobBackend {
  poll(upstreamJobId: string, target: DeploymentTarget): Promise<VideoJobState>;
  content(upstreamJobId: string, target: DeploymentTarget): Promise<{ contentType: string; bytes: Uint8Array }>;
}

export function createLocalVideoJobBackend(local: LocalVideoBackend): VideoJobBackend {
  return {
    poll: (upstreamJobId) => local.pollVideoJob(upstreamJobId),
    content: (upstreamJobId) => local.fetchVideoContent(upstreamJobId),
  };
}

/** OpenAI's videos API: GET /videos/{id} and /videos/{id}/content through the shared upstream client. */
export function createOpenAIVideoJobBackend(client: UpstreamClient, provider = 'openai'): VideoJobBackend {
  const send = async (request: UpstreamRequest, target: DeploymentTarget) => {
    const response = await client.sendBuffered(request, {
      signal: AbortSignal.timeout(target.timeouts.totalMs),
      firstByteMs: target.timeouts.firstByteMs,
      idleMs: target.timeouts.firstByteMs,
      provider,
    });
    const bytes = response.body;
    if (response.statusCode >= 400) {
      let body: unknown = bytes.toString('utf8');
      try {
        body = JSON.parse(body as string);
      } catch {
        // The status alone classifies it.
      }
      throw parseOpenAIError(provider, response.statusCode, body, response.headers);
    }
    return { bytes, contentType: String(response.headers['content-type'] ?? 'application/octet-stream') };
  };
  return {
    async poll(upstreamJobId, target) {
      const { bytes } = await send(buildVideoStatusRequest(upstreamJobId, target), target);
      let body: unknown;
      try {
        body = JSON.parse(bytes.toString('utf8'));
      } catch (error) {
        throw new GatewayError('upstream_bad_response', 'The provider answered a video status that is not JSON.', { provider, cause: error });
      }
      const record = parseVideoJob(body, '', '', 0);
      return { status: record.status, progress: record.progress, error: record.error };
    },
    async content(upstreamJobId, target) {
      return send(buildVideoContentRequest(upstreamJobId, target), target);
    },
  };
}
