import type { APIPromise, OpenAI } from 'openai';
import { APIResource } from 'openai/core/resource';
import { withMetaMethod, type GwAPIPromise } from '../with-meta.js';

export interface GwVideoCreateParams {
  model: string;
  prompt: string;
  /** Length in seconds. */
  seconds?: number | null;
  /** "WIDTHxHEIGHT". */
  size?: string | null;
  [extra: string]: unknown;
}

export type GwVideoStatus = 'queued' | 'in_progress' | 'completed' | 'failed';

export interface GwVideo {
  id: string;
  object: 'video.generation' | string;
  status: GwVideoStatus;
  model: string;
  prompt?: string;
  seconds?: number;
  size?: string;
  progress?: number;
  created_at: number;
  completed_at?: number | null;
  error?: { code: string; message: string } | null;
}

/** Asynchronous video generation: create a job, poll it, then download the bytes. */
export class GwVideos extends APIResource {
  /** POST /v1/videos: starts a generation job and answers its record. */
  create(body: GwVideoCreateParams, options?: OpenAI.RequestOptions): GwAPIPromise<GwVideo> {
    return withMetaMethod(this._client.post<GwVideo>('/videos', { body, ...options }));
  }

  /** GET /v1/videos/{id}: the job's current record. */
  retrieve(videoId: string, options?: OpenAI.RequestOptions): GwAPIPromise<GwVideo> {
    return withMetaMethod(this._client.get<GwVideo>(`/videos/${encodeURIComponent(videoId)}`, options));
  }

  /** GET /v1/videos/{id}/content: the finished video's bytes. */
  content(videoId: string, options?: OpenAI.RequestOptions): GwAPIPromise<Uint8Array> {
    const raw = this._client.get<Response>(`/videos/${encodeURIComponent(videoId)}/content`, {
      ...options,
      __binaryResponse: true,
    });
    // The transform's promise is awaited by the SDK's async parse step, so the call resolves to bytes.
    return withMetaMethod(raw._thenUnwrap((response) => readBytes(response)) as unknown as APIPromise<Uint8Array>);
  }
}

async function readBytes(response: Response): Promise<Uint8Array> {
  return new Uint8Array(await response.arrayBuffer());
}
