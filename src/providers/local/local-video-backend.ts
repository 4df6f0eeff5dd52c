import { GatewayError, invalidRequest } from '../../errors/gateway-error.js';
import type { VideoRequest, VideoStatus } from '../../protocol/videos.js';
import { fnv1a } from './fnv-hash.js';
import { readMarkers, upstreamFailure } from './local-markers.js';
import { writeMinimalMp4 } from './mp4-writer.js';

export const LOCAL_VIDEO_DEFAULT_SECONDS = 4;
export const LOCAL_VIDEO_DEFAULT_SIZE = '720x1280';

export interface LocalVideoJobState {
  status: VideoStatus;
  /** 0–100. */
  progress: number;
  error?: { code: string; message: string };
}

/**
 * What the video job runner calls for `local` deployments. The job id encodes everything the job
 * needs (start time, length, size, simulated failure), so polling needs no memory and survives a
 * gateway restart, just as a real upstream job would.
 */
export interface LocalVideoBackend {
  startVideoJob(request: VideoRequest): Promise<{ upstreamJobId: string }>;
  pollVideoJob(upstreamJobId: string): Promise<LocalVideoJobState>;
  fetchVideoContent(upstreamJobId: string): Promise<{ contentType: 'video/mp4'; bytes: Uint8Array }>;
}

export interface LocalVideoOptions {
  /** Time from start to completion (default 2000 ms); a `[local:sleep:<ms>]` prompt marker overrides it. */
  completionDelayMs?: number;
  now?: () => number;
}

interface JobFacts {
  startedAt: number;
  delayMs: number;
  seconds: number;
  size: string;
  failStatus: number;
  promptHash: string;
}

const ID_PATTERN = /^lvid_([0-9a-z]+)_([0-9a-z]+)_(\d+)_(\d+x\d+)_(\d+)_([0-9a-f]{8})$/;

export function createLocalVideoBackend(options: LocalVideoOptions = {}): LocalVideoBackend {
  const now = options.now ?? Date.now;
  const defaultDelayMs = options.completionDelayMs ?? 2000;
  return {
    async startVideoJob(request) {
      const markers = readMarkers(request.prompt);
      const facts: JobFacts = {
        startedAt: now(),
        delayMs: markers.sleepMs ?? defaultDelayMs,
        seconds: request.seconds ?? LOCAL_VIDEO_DEFAULT_SECONDS,
        size: request.size ?? LOCAL_VIDEO_DEFAULT_SIZE,
        failStatus: markers.failStatus ?? 0,
        promptHash: fnv1a(request.prompt).toString(16).padStart(8, '0'),
      };
      const id = `lvid_${facts.startedAt.toString(36)}_${facts.delayMs.toString(36)}_${facts.seconds}_${facts.size}_${facts.failStatus}_${facts.promptHash}`;
      return { upstreamJobId: id };
    },
    async pollVideoJob(upstreamJobId) {
      return jobState(parseJobId(upstreamJobId), now());
    },
    async fetchVideoContent(upstreamJobId) {
      const facts = parseJobId(upstreamJobId);
      const state = jobState(facts, now());
      if (state.status !== 'completed') throw invalidRequest(`Video ${upstreamJobId} is ${state.status}; its content is not available.`);
      const payload = Buffer.from(`gw local video ${facts.size} ${facts.seconds}s ${facts.promptHash}`, 'utf8');
      return { contentType: 'video/mp4', bytes: writeMinimalMp4(facts.seconds, payload) };
    },
  };
}

function parseJobId(id: string): JobFacts {
  const match = ID_PATTERN.exec(id);
  if (!match) throw new GatewayError('not_found', `No local video job ${id}.`, { provider: 'local' });
  return {
    startedAt: parseInt(match[1], 36),
    delayMs: parseInt(match[2], 36),
    seconds: Number(match[3]),
    size: match[4],
    failStatus: Number(match[5]),
    promptHash: match[6],
  };
}

/** queued for the first tenth of the delay, in_progress with rising progress, then completed (or failed). */
function jobState(facts: JobFacts, at: number): LocalVideoJobState {
  const elapsed = Math.max(0, at - facts.startedAt);
  if (elapsed >= facts.delayMs) {
    if (facts.failStatus) {
      const failure = upstreamFailure(facts.failStatus);
      return { status: 'failed', progress: 100, error: { code: failure.code, message: failure.message } };
    }
    return { status: 'completed', progress: 100 };
  }
  if (elapsed < facts.delayMs / 10) return { status: 'queued', progress: 0 };
  return { status: 'in_progress', progress: Math.min(99, Math.floor((elapsed / facts.delayMs) * 100)) };
}
