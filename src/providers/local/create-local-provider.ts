import { GatewayError } from '../../errors/gateway-error.js';
import type { Operation } from '../../protocol/endpoints.js';
import type { VideoRequest } from '../../protocol/videos.js';
import type { Outcome } from '../../pipeline/stage.js';
import type { Invocation, Provider } from '../provider.js';
import { runLocalChat, type LocalStreamOptions } from './local-chat.js';
import { runLocalCompletion } from './local-completion.js';
import { runLocalEmbedding } from './local-embedding.js';
import { LOCAL_MODELS } from './local-models.js';
import { createLocalImages } from './local-images.js';
import { runLocalModeration } from './local-moderation.js';
import { runLocalOcr } from './local-ocr.js';
import { runLocalRerank } from './local-rerank.js';
import { runLocalSpeech } from './local-speech.js';
import { runLocalTranscription } from './local-transcription.js';
import { createLocalVideoBackend, LOCAL_VIDEO_DEFAULT_SECONDS, LOCAL_VIDEO_DEFAULT_SIZE, type LocalVideoBackend } from './local-video-backend.js';

export interface LocalProviderOptions {
  /** Pause between streamed tokens (default 0: as fast as the client reads). */
  tokenDelayMs?: number;
  /** Time a video job takes to complete (default 2000 ms). */
  videoCompletionDelayMs?: number;
  /** Clock for `created` timestamps and video job progress. */
  now?: () => number;
}

/** The local provider, plus the video backend the video job runner drives. */
export interface LocalProvider extends Provider {
  readonly video: LocalVideoBackend;
}

type Handler = (invocation: Invocation) => Promise<Outcome>;

/**
 * The built-in `local` provider: every operation answered offline and deterministically, so the
 * gateway works without credentials and tests have a real-shaped upstream. It implements Provider
 * directly (no HTTP).
 */
export function createLocalProvider(options: LocalProviderOptions = {}): LocalProvider {
  const now = options.now ?? Date.now;
  const streamOptions: LocalStreamOptions = { tokenDelayMs: options.tokenDelayMs ?? 0, now };
  const images = createLocalImages(now);
  const video = createLocalVideoBackend({ completionDelayMs: options.videoCompletionDelayMs, now });
  const handlers: Record<Operation, Handler> = {
    chat: (invocation) => runLocalChat(invocation, streamOptions),
    completion: (invocation) => runLocalCompletion(invocation, streamOptions),
    embedding: runLocalEmbedding,
    moderation: runLocalModeration,
    rerank: runLocalRerank,
    ocr: runLocalOcr,
    image_generation: (invocation) => images.generate(invocation),
    image_edit: (invocation) => images.edit(invocation),
    speech: runLocalSpeech,
    transcription: runLocalTranscription,
    video: (invocation) => startVideo(invocation, video, now),
  };
  const modelOperations = new Map(LOCAL_MODELS.map((model) => [model.id, model.operations]));
  return {
    id: 'local',
    operations: new Set(Object.keys(handlers) as Operation[]),
    inProcess: true,
    video,
    async invoke(invocation) {
      const operation = invocation.call.operation;
      // A deployment may name any upstream model; the shipped ones refuse what they are not listed for.
      const served = modelOperations.get(invocation.target.upstreamModel);
      if (served && !served.includes(operation)) {
        throw new GatewayError('unsupported_model', `${invocation.call.model} does not support ${operation}.`, { provider: 'local' });
      }
      const handler = handlers[operation];
      if (!handler) throw new GatewayError('unsupported_endpoint', `The local provider does not serve ${operation}.`, { provider: 'local' });
      return handler(invocation);
    },
  };
}

/**
 * Invoking `video` starts a job and answers the queued record with the upstream job id; a video job
 * runner may instead call `provider.video` directly. A `[local:fail:…]` marker fails the job later,
 * not the start, as real video upstreams do.
 */
async function startVideo(invocation: Invocation, video: LocalVideoBackend, now: () => number): Promise<Outcome> {
  const request = invocation.call.request as unknown as VideoRequest;
  const { upstreamJobId } = await video.startVideoJob(request);
  const seconds = request.seconds ?? LOCAL_VIDEO_DEFAULT_SECONDS;
  const body = {
    id: upstreamJobId,
    object: 'video.generation',
    status: 'queued',
    model: invocation.call.model,
    prompt: request.prompt,
    seconds,
    size: request.size ?? LOCAL_VIDEO_DEFAULT_SIZE,
    progress: 0,
    created_at: Math.floor(now() / 1000),
    completed_at: null,
    error: null,
  };
  return { kind: 'json', body, usage: { videoSeconds: seconds } };
}
