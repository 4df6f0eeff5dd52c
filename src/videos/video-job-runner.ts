import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { acquireLease } from '../db/sql-lease.js';
import type { DeploymentTarget } from '../providers/provider.js';
import type { VideoJobBackend } from './video-job-backend.js';
import type { VideoStore } from './video-store.js';

export interface VideoJobRunnerOptions {
  db: Kysely<Database>;
  store: VideoStore;
  backends: ReadonlyMap<string, VideoJobBackend>;
  targetOf(deploymentId: string): DeploymentTarget | undefined;
  instanceId: string;
  pollIntervalMs?: number;
  leaseTtlMs?: number;
  logger: { warn(object: Record<string, unknown>, message: string): void };
  now?: () => number;
}

export interface VideoJobRunner {
  /** One polling pass (also what the timer runs); returns how many jobs were advanced. */
  tick(): Promise<number>;
  stop(): void;
}

const LEASE = 'video-job-runner';

/**
 * Advances unfinished video jobs by polling their upstream. Runs on one instance at a time (a SQL
 * lease); if that instance dies, the lease expires and another takes the jobs over — they are in
 * the database, so nothing is lost.
 */
export function startVideoJobRunner(options: VideoJobRunnerOptions): VideoJobRunner {
  const now = options.now ?? Date.now;
  const leaseTtlMs = options.leaseTtlMs ?? 15_000;
  let running = false;

  async function tick(): Promise<number> {
    if (running) return 0;
    running = true;
    try {
      if (!(await acquireLease(options.db, LEASE, options.instanceId, leaseTtlMs, now()))) return 0;
      const jobs = await options.store.listUnfinished(100);
      for (const job of jobs) {
        const backend = options.backends.get(job.provider);
        const target = options.targetOf(job.deployment_id);
        if (!backend || !target) {
          await options.store.update(job.id, {
            status: 'failed',
            error: JSON.stringify({ code: 'deployment_gone', message: 'The deployment that started this video is no longer configured.' }),
            completed_at: now(),
          });
          continue;
        }
        try {
          const state = await backend.poll(job.upstream_job_id, target);
          const finished = state.status === 'completed' || state.status === 'failed';
          if (state.status !== job.status || state.progress !== Number(job.progress) || finished) {
            await options.store.update(job.id, {
              status: state.status,
              progress: Math.max(0, Math.min(100, Math.round(state.progress))),
              error: state.error ? JSON.stringify(state.error) : null,
              completed_at: finished ? now() : null,
            });
          }
        } catch (error) {
          options.logger.warn({ err: error, videoId: job.id }, 'video job poll failed; will retry');
        }
      }
      return jobs.length;
    } catch (error) {
      options.logger.warn({ err: error }, 'video job runner pass failed');
      return 0;
    } finally {
      running = false;
    }
  }

  const timer = setInterval(() => void tick(), options.pollIntervalMs ?? 1000);
  timer.unref();
  return { tick, stop: () => clearInterval(timer) };
}
