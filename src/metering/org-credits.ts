import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { GatewayError } from '../errors/gateway-error.js';
import { newId } from '../lib/ids.js';
import { creditAccount } from './spend-accounts.js';
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

  return {
    balance,
    async topUp(orgId, amountNanos, note, kind = 'topup') {
      const account = creditAccount(orgId);
      // Seed before writing the transaction: seeding reads the SQL total, and must not count this top-up twice.
      try {
        await options.seeder.ensure([account]);
      } catch (error) {
        throw new GatewayError('credit_check_failed', 'The credit system is unavailable; try again shortly.', { cause: error });
      }
      await options.db
        .insertInto('credit_transactions')
        .values({ id: newId(), org_id: orgId, amount_nanos: amountNanos, kind, note, created_at: now() })
        .execute();
      try {
        await options.gate.addCredit(account.key, amountNanos);
      } catch (error) {
        throw new GatewayError('credit_check_failed', 'The top-up was recorded but the live balance could not be updated; it applies after a restart.', { cause: error });
      }
      return balance(orgId);
    },
  };
}
