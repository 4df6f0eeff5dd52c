import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { GatewayError } from '../errors/gateway-error.js';
import { newId } from '../lib/ids.js';
import { creditAccount } from './spend-accounts.js';
import { formatUsd } from './format-usd.js';
import { MAX_CREDITED_NANOS, MAX_TOP_UP_NANOS } from './money-limits.js';
import type { SpendGate } from './spend-gate.js';
import type { SpendSeeder } from './spend-seeder.js';

export interface CreditBalance {
  orgId: string;
  creditedNanos: number;
  spentNanos: number;
  reservedNanos: number;
  /** What new calls can still reserve: credited − spent − reserved. */
  availableNanos: number;
}

/** An org's credit balance: top-ups go to SQL (credit_transactions, the record) and to the gate (the live counter). */
export interface OrgCredits {
  balance(orgId: string): Promise<CreditBalance>;
  topUp(orgId: string, amountNanos: number, note: string | null, kind?: string): Promise<CreditBalance>;
}

export function createOrgCredits(options: { db: Kysely<Database>; gate: SpendGate; seeder: SpendSeeder; now?: () => number }): OrgCredits {
  const now = options.now ?? Date.now;

  async function balance(orgId: string): Promise<CreditBalance> {
    const account = creditAccount(orgId);
    try {
      await options.seeder.ensure([account]);
      const state = await options.gate.read(account.key);
      return {
        orgId,
        creditedNanos: state.creditedNanos,
        spentNanos: state.spentNanos,
        reservedNanos: state.reservedNanos,
        availableNanos: state.creditedNanos - state.spentNanos - state.reservedNanos,
      };
    } catch (error) {
      throw new GatewayError('credit_check_failed', 'The credit system is unavailable; try again shortly.', { cause: error });
    }
  }

  async function topUpNow(orgId: string, amountNanos: number, note: string | null, kind: string): Promise<CreditBalance> {
    const account = creditAccount(orgId);
    // Seed before writing the transaction: seeding reads the SQL total, and must not count this top-up twice.
    let before;
    try {
      await options.seeder.ensure([account]);
      before = await options.gate.read(account.key);
    } catch (error) {
      throw new GatewayError('credit_check_failed', 'The credit system is unavailable; try again shortly.', { cause: error });
    }
    // Checked before anything is written: a refused top-up leaves no row behind.
    refuseBeyondLimits(amountNanos, before.creditedNanos);
    await options.db
      .insertInto('credit_transactions')
      .values({ id: newId(), org_id: orgId, amount_nanos: amountNanos, kind, note, created_at: now() })
      .execute();
    let creditedNanos: number;
    try {
      creditedNanos = await options.gate.addCredit(account.key, amountNanos);
    } catch (error) {
      throw new GatewayError('credit_check_failed', 'The top-up was recorded but the live balance could not be updated; it applies after a restart.', { cause: error });
    }
    try {
      return await balance(orgId);
    } catch {
      // The top-up is written and counted: answer it from what the writes returned rather than fail it.
      const { spentNanos, reservedNanos } = before;
      return { orgId, creditedNanos, spentNanos, reservedNanos, availableNanos: creditedNanos - spentNanos - reservedNanos };
    }
  }

  // Top-ups of this instance run one at a time, so that two of them cannot both pass the credited-total check.
  let topUps: Promise<unknown> = Promise.resolve();

  return {
    balance,
    topUp(orgId, amountNanos, note, kind = 'topup') {
      const result = topUps.then(() => topUpNow(orgId, amountNanos, note, kind));
      topUps = result.catch(() => undefined);
      return result;
    },
  };
}

/** 400 for a top-up that is not a positive amount within MAX_TOP_UP_NANOS, or that would take the credited total past MAX_CREDITED_NANOS. */
function refuseBeyondLimits(amountNanos: number, creditedNanos: number): void {
  if (!Number.isSafeInteger(amountNanos) || amountNanos <= 0 || amountNanos > MAX_TOP_UP_NANOS) {
    throw new GatewayError('invalid_request', `Invalid 'amount_usd': a top-up must be a positive amount of at most ${formatUsd(MAX_TOP_UP_NANOS)} USD.`, {
      param: 'amount_usd',
    });
  }
  if (creditedNanos + amountNanos > MAX_CREDITED_NANOS) {
    throw new GatewayError(
      'invalid_request',
      `Invalid 'amount_usd': this top-up would take the org's credited total to ${formatUsd(creditedNanos + amountNanos)} USD, above the maximum of ${formatUsd(MAX_CREDITED_NANOS)} USD that a balance holds exactly. Nothing was credited.`,
      { param: 'amount_usd' },
    );
  }
}
