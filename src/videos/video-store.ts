import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { VideoRecord, VideoStatus } from '../protocol/videos.js';
import type { VideosTable } from './video-tables.js';

export type VideoJob = VideosTable;

/** Video jobs in SQL, so a job outlives the instance that created it. */
export interface VideoStore {
  insert(job: VideoJob): Promise<void>;
  get(id: string): Promise<VideoJob | undefined>;
  listUnfinished(limit: number): Promise<VideoJob[]>;
  update(id: string, patch: Partial<Pick<VideoJob, 'status' | 'progress' | 'error' | 'completed_at'>>): Promise<void>;
  /** Failed jobs whose charge has not been given back yet (jobs made before refunds are not listed). */
  listRefundsOwed(limit: number): Promise<VideoJob[]>;
  /** Records the refund of a failed job; false when it was already recorded. */
  markRefunded(id: string, refundNanos: number): Promise<boolean>;
}

export function createSqlVideoStore(db: Kysely<Database>, now: () => number = Date.now): VideoStore {
  return {
    async insert(job) {
      await db.insertInto('videos').values(job).execute();
    },
    async get(id) {
      return db.selectFrom('videos').selectAll().where('id', '=', id).executeTakeFirst();
    },
    async listUnfinished(limit) {
      return db.selectFrom('videos').selectAll().where('status', 'in', ['queued', 'in_progress']).orderBy('updated_at').limit(limit).execute();
    },
    async update(id, patch) {
      await db.updateTable('videos').set({ ...patch, updated_at: now() }).where('id', '=', id).execute();
    },
    async listRefundsOwed(limit) {
      return db
        .selectFrom('videos')
        .selectAll()
        .where('status', '=', 'failed')
        .where('refunded_at', 'is', null)
        .where('request_id', 'is not', null)
        .orderBy('updated_at')
        .limit(limit)
        .execute();
    },
    async markRefunded(id, refundNanos) {
      const time = now();
      const result = await db
        .updateTable('videos')
        .set({ refunded_at: time, refund_nanos: refundNanos, updated_at: time })
        .where('id', '=', id)
        .where('refunded_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
  };
}

export function videoRecordOf(job: VideoJob): VideoRecord {
  return {
    id: job.id,
    object: 'video.generation',
    status: job.status as VideoStatus,
    model: job.model,
    prompt: job.prompt,
    seconds: Number(job.seconds),
    size: job.size,
    progress: Number(job.progress),
    created_at: Math.floor(Number(job.created_at) / 1000),
    completed_at: job.completed_at === null ? null : Math.floor(Number(job.completed_at) / 1000),
    error: job.error ? JSON.parse(job.error) : null,
  };
}
