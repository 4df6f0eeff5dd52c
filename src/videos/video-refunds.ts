import type { Kysely, Selectable } from 'kysely';
import type { Database, SpendLedgerTable } from '../db/schema.js';
import { newTimeOrderedId } from '../lib/ids.js';
import type { SpendAccount, SpendGate } from '../metering/spend-gate.js';
import type { SpendSeeder } from '../metering/spend-seeder.js';
import type { VideoJob, VideoStore } from './video-store.js';

export interface VideoRefundsOptions {
  db: Kysely<Database>;
  store: VideoStore;
  /** The metering gate as callers use it (the seeding wrapper, metering/spend-seeder.ts). */
  gate: Pick<SpendGate, 'claimOnce' | 'settle' | 'unseed'>;
  seeder: Pick<SpendSeeder, 'ensure' | 'reseed'>;
  /** Writes this instance's queued ledger entries: the charge of a job it created may still be among them. */
  flushLedger(): Promise<void>;
  now?: () => number;
  /**
   * How long after a job's creation its charge may still reach the ledger (entries are written in
   * batches, retried while the database is away). Past it, a charge not found is taken as never made.
   */
  chargeGraceMs?: number;
}

export type RefundOutcome =
  | { kind: 'refunded'; nanos: number }
  /** The creating call cost nothing: nothing to give back. */
  | { kind: 'nothing_charged' }
  /** The charge is not in the ledger yet: ask again later. */
  | { kind: 'charge_pending' }
  /** The charge never reached the ledger (its settlement failed, so nothing was charged): nothing is given back. */
  | { kind: 'charge_missing' };

export interface VideoRefunds {
  /** Gives back the charge of a failed job, once, and records that on the job. Safe to repeat after any failure. */
  refund(job: VideoJob): Promise<RefundOutcome>;
}

/** The ledger entry that gives a charge back is named after it (request ids are unique in the ledger). */
export function refundRequestId(chargeRequestId: string): string {
  return `${chargeRequestId}:refund`;
}

const DEFAULT_CHARGE_GRACE_MS = 15 * 60_000;
/** Longer than any retrying of one refund lasts (the database away for days included). */
const MARKER_TTL_MS = 7 * 86_400_000;

type LedgerRow = Selectable<SpendLedgerTable>;

/**
 * Refunds of video jobs that failed after their creation was charged. The creating call was settled
 * when the upstream accepted the job (docs/money.md); when the job fails, that charge is given back
 * in full: a ledger entry of the opposite amount (so every spend total, the credit balance and the
 * budgets read from SQL net it out) and the same amount off the live counters the call was charged to.
 *
 * Exactly once, across failures and restarts, although SQL and the counters (Redis, or this
 * process's memory) cannot change together:
 * - the ledger entry has a unique request id, so it is written at most once;
 * - the counters are changed only by the attempt that first claims the job's marker, and before the
 *   entry is written. The marker lives with the counters and is lost with them (a restart of the
 *   embedded gate, Redis losing its data), when they are seeded again from SQL, entry included;
 * - an attempt that finds the marker already taken cannot know whether the earlier one changed the
 *   counters (it may have died in between, or the store failed), so it writes the entry if missing
 *   and has the counters read again from SQL, which then holds the refund exactly once.
 */
export function createVideoRefunds(options: VideoRefundsOptions): VideoRefunds {
  const { db, store, gate, seeder } = options;
  const now = options.now ?? Date.now;
  const graceMs = options.chargeGraceMs ?? DEFAULT_CHARGE_GRACE_MS;

  function ledgerEntry(requestId: string): Promise<LedgerRow | undefined> {
    return db.selectFrom('spend_ledger').selectAll().where('request_id', '=', requestId).executeTakeFirst();
  }

  async function chargeOf(requestId: string): Promise<LedgerRow | undefined> {
    const entry = await ledgerEntry(requestId);
    if (entry) return entry;
    await options.flushLedger();
    return ledgerEntry(requestId);
  }

  /**
   * Written straight to SQL, not through the batched ledger: the refund is recorded as done only
   * once this entry is durable. Dated at the charge's time, so it falls in the charge's day and
   * budget period, whose counters it is taken off: SQL and the counters then agree on reseeding.
   */
  async function writeRefundEntry(charge: LedgerRow, refundId: string): Promise<void> {
    await db
      .insertInto('spend_ledger')
      .values({
        id: newTimeOrderedId(now()),
        request_id: refundId,
        org_id: charge.org_id,
        key_id: charge.key_id,
        key_alias: charge.key_alias,
        team_id: charge.team_id,
        user: charge.user,
        model: charge.model,
        operation: charge.operation,
        // No usage classes: the refund gives back money, and usage totals must not count the seconds twice.
        units: JSON.stringify({ refundOf: charge.request_id }),
        cost_nanos: -Number(charge.cost_nanos),
        unpriced: Number(charge.unpriced),
        created_at: Number(charge.created_at),
      })
      .onConflict((conflict) => conflict.column('request_id').doNothing())
      .execute();
  }

  /** Closes the job's refund with nothing given back. */
  async function nothingToGive(job: VideoJob, kind: 'nothing_charged' | 'charge_missing'): Promise<RefundOutcome> {
    await store.markRefunded(job.id, 0);
    return { kind };
  }

  return {
    async refund(job) {
      if (!job.request_id) return nothingToGive(job, 'charge_missing');
      const charge = await chargeOf(job.request_id);
      if (!charge) return now() - Number(job.created_at) < graceMs ? { kind: 'charge_pending' } : nothingToGive(job, 'charge_missing');
      const cost = Number(charge.cost_nanos);
      if (!(cost > 0)) return nothingToGive(job, 'nothing_charged');

      const refundId = refundRequestId(charge.request_id);
      const accounts = parseAccounts(job.spend_accounts);
      const first = await gate.claimOnce(`video-refund:${job.id}`, MARKER_TTL_MS);
      const written = (await ledgerEntry(refundId)) !== undefined;
      if (first && !written && accounts.length > 0) {
        // Counters this instance has not seeded yet are seeded from SQL first, without the refund.
        await seeder.ensure(accounts);
        await gate.settle(refundId, accounts, -cost);
      }
      if (!written) await writeRefundEntry(charge, refundId);
      if (!first && accounts.length > 0) {
        await gate.unseed(accounts.map((account) => account.key));
        await seeder.reseed(accounts);
      }
      await store.markRefunded(job.id, cost);
      return { kind: 'refunded', nanos: cost };
    },
  };
}

function parseAccounts(json: string | null): SpendAccount[] {
  if (!json) return [];
  const accounts: unknown = JSON.parse(json);
  return Array.isArray(accounts) ? (accounts as SpendAccount[]) : [];
}
