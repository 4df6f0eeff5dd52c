import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { acquireLease, releaseLease } from '../db/sql-lease.js';
import type { DeploymentTarget } from '../providers/provider.js';
import type { VideoJobBackend } from './video-job-backend.js';
import type { VideoRefunds } from './video-refunds.js';
import type { VideoJob, VideoStore } from './video-store.js';

export interface VideoJobRunnerOptions {
  db: Kysely<Database>;
  store: VideoStore;
  backends: ReadonlyMap<string, VideoJobBackend>;
  targetOf(deploymentId: string): DeploymentTarget | undefined;
  /** Gives back the charge of jobs that fail (video-refunds.ts). */
  refunds?: VideoRefunds;
  instanceId: string;
  pollIntervalMs?: number;
  leaseTtlMs?: number;
  logger: { warn(object: Record<string, unknown>, message: string): void };
  now?: () => number;
}

export interface VideoJobRunner {
  /** One polling pass (also what the timer runs); returns how many jobs were advanced. */
  tick(): Promise<number>;
  /**
   * Stops the timer, waits for a pass under way (at most `waitMs`: a poll may hang on its upstream),
   * and gives up the lease so another instance takes over at once. A pass still running then is
   * harmless: a refund repeated by another instance is still made once (video-refunds.ts).
   */
  stop(waitMs?: number): Promise<void>;
}

const LEASE = 'video-job-runner';
const BATCH = 100;

/**
 * Advances unfinished video jobs by polling their upstream, and refunds the ones that failed. Runs
 * on one instance at a time (a SQL lease); if that instance dies, the lease expires and another
 * takes the jobs over — they are in the database, so nothing is lost, refunds owed included.
 */
export function startVideoJobRunner(options: VideoJobRunnerOptions): VideoJobRunner {
  const now = options.now ?? Date.now;
  const leaseTtlMs = options.leaseTtlMs ?? 15_000;
  let pass: Promise<number> | undefined;
  let stopped = false;

  async function advance(job: VideoJob): Promise<void> {
    const backend = options.backends.get(job.provider);
    const target = options.targetOf(job.deployment_id);
    if (!backend || !target) {
      await options.store.update(job.id, {
        status: 'failed',
        error: JSON.stringify({ code: 'deployment_gone', message: 'The deployment that started this video is no longer configured.' }),
        completed_at: now(),
      });
      return;
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

  /** Every failed job still owed its refund: the ones that just failed, and any a restart or an error left behind. */
  async function refundFailed(refunds: VideoRefunds): Promise<void> {
    for (const job of await options.store.listRefundsOwed(BATCH)) {
      try {
        const outcome = await refunds.refund(job);
        if (outcome.kind === 'charge_missing') {
          options.logger.warn({ videoId: job.id, requestId: job.request_id }, 'failed video job: no charge found for its creation; nothing refunded');
        }
      } catch (error) {
        options.logger.warn({ err: error, videoId: job.id }, 'video refund failed; will retry');
      }
    }
  }

  async function runPass(): Promise<number> {
    try {
      if (!(await acquireLease(options.db, LEASE, options.instanceId, leaseTtlMs, now()))) return 0;
      const jobs = await options.store.listUnfinished(BATCH);
      for (const job of jobs) await advance(job);
      if (options.refunds) await refundFailed(options.refunds);
      return jobs.length;
    } catch (error) {
      options.logger.warn({ err: error }, 'video job runner pass failed');
      return 0;
    }
  }

  function tick(): Promise<number> {
    if (pass || stopped) return Promise.resolve(0);
    pass = runPass().finally(() => {
      pass = undefined;
    });
    return pass;
  }

  const timer = setInterval(() => void tick(), options.pollIntervalMs ?? 1000);
  timer.unref();
  return {
    tick,
    async stop(waitMs = 5000) {
      stopped = true;
      clearInterval(timer);
      if (pass) {
        let waited: NodeJS.Timeout | undefined;
        await Promise.race([pass, new Promise<void>((resolve) => (waited = setTimeout(resolve, waitMs)))]);
        clearTimeout(waited);
      }
      await releaseLease(options.db, LEASE, options.instanceId).catch((error: unknown) =>
        options.logger.warn({ err: error }, 'video job runner lease release failed; it expires on its own'),
      );
    },
  };
}
