import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import { formatUsd, parseUsdNanos } from '../../metering/format-usd.js';
import type { CreditBalance, OrgCredits } from '../../metering/org-credits.js';
import type { SpendLedger } from '../../metering/spend-ledger.js';
import type { ManagementAuth } from '../management-auth.js';
import { pathParam } from '../path-param.js';
import { validateBody } from '../validate-body.js';

export interface CreditRoutesDependencies {
  auth: ManagementAuth;
  credits: OrgCredits;
  ledger: SpendLedger;
  /** Whether an org exists (top-ups to unknown orgs are 404). */
  orgExists(orgId: string): Promise<boolean>;
}

export const HISTORY_MAX_LIMIT = 500;

const historyQuery = z.object({
  limit: z.coerce.number().int().min(1).max(HISTORY_MAX_LIMIT).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});

const topUpBody = z.object({
  amount_usd: z.union([z.string(), z.number()]).transform((value) => String(value)),
  note: z.string().max(500).nullish(),
});

function balanceView(balance: CreditBalance) {
  return {
    object: 'credit_balance',
    org_id: balance.orgId,
    currency: 'USD',
    balance_usd: formatUsd(balance.availableNanos),
    balance_nanos: balance.availableNanos,
    reserved_usd: formatUsd(balance.reservedNanos),
    credited_usd: formatUsd(balance.creditedNanos),
    spent_usd: formatUsd(balance.spentNanos),
  };
}

/**
 * GET /api/credits/balance and /api/credits/history (the caller's org, by its bearer key), and the
 * admin top-up POST /api/admin/orgs/:orgId/credits. Amounts are exact USD decimal strings (docs/money.md).
 */
export function registerCreditRoutes(app: FastifyInstance, dependencies: CreditRoutesDependencies): void {
  const { auth, credits, ledger } = dependencies;
  const keySchema = { tags: ['Credits'], security: [{ bearerAuth: [] }] };

  app.get('/api/credits/balance', { schema: keySchema }, async (request) => {
    const caller = await auth.requireKey(request);
    return balanceView(await credits.balance(caller.org.id));
  });

  app.get('/api/credits/history', { schema: keySchema }, async (request) => {
    const caller = await auth.requireKey(request);
    const parsed = historyQuery.safeParse(request.query ?? {});
    if (!parsed.success) {
      const field = String(parsed.error.issues[0]?.path[0] ?? 'limit');
      throw new GatewayError('invalid_request', `Invalid '${field}': limit must be an integer from 1 to ${HISTORY_MAX_LIMIT}, offset an integer from 0.`, { param: field });
    }
    const { limit, offset } = parsed.data;
    // One extra row tells whether another page exists.
    const entries = await ledger.history(caller.org.id, { limit: limit + 1, offset });
    return {
      object: 'list',
      data: entries.slice(0, limit).map((entry) => ({
        object: 'credit_history_entry',
        created_at: new Date(entry.createdAt).toISOString(),
        request_id: entry.requestId,
        key_alias: entry.keyAlias,
        user: entry.user,
        model: entry.model,
        operation: entry.operation,
        units: entry.units,
        cost_usd: formatUsd(entry.costNanos),
        cost_nanos: entry.costNanos,
        unpriced: entry.unpriced,
      })),
      limit,
      offset,
      has_more: entries.length > limit,
    };
  });

  app.post('/api/admin/orgs/:orgId/credits', { schema: { tags: ['Admin', 'Credits'], security: [{ bearerAuth: [] }] } }, async (request) => {
    const principal = await auth.requireAdmin(request);
    const orgId = pathParam(request.params, 'orgId');
    if ((principal.scope === 'org' && principal.orgId !== orgId) || !(await dependencies.orgExists(orgId))) {
      throw new GatewayError('not_found', `Unknown organization '${orgId}'.`);
    }
    const input = validateBody(topUpBody, request.body);
    let amountNanos: number;
    try {
      amountNanos = parseUsdNanos(input.amount_usd);
    } catch (error) {
      throw new GatewayError('invalid_request', `Invalid 'amount_usd': ${(error as Error).message}; send a positive decimal string such as "10.00".`, { param: 'amount_usd' });
    }
    if (amountNanos <= 0) throw new GatewayError('invalid_request', "Invalid 'amount_usd': the amount must be positive.", { param: 'amount_usd' });
    const balance = await credits.topUp(orgId, amountNanos, input.note ?? null);
    return { ...balanceView(balance), credited_now_usd: formatUsd(amountNanos) };
  });
}
