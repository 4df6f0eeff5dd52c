// What the meter stage's unit tests share: an in-memory database with a price catalog, a caller
// (org + key) per test, a chat call, and the stage wired to real counters, ledger and credits.
import { createDatabase, type DatabaseHandle } from '../../src/db/create-database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createEventBus, type GatewayEvent } from '../../src/lib/event-bus.js';
import { createMemorySpendGate } from '../../src/metering/memory-spend-gate.js';
import { createMeterStage } from '../../src/metering/meter-stage.js';
import { createOrgCredits } from '../../src/metering/org-credits.js';
import { createPricingCatalog, type PricingCatalog } from '../../src/metering/pricing-catalog.js';
import type { ModelPrice } from '../../src/metering/model-price.js';
import type { SpendGate } from '../../src/metering/spend-gate.js';
import { createSqlSpendLedger, type SpendLedger } from '../../src/metering/spend-ledger.js';
import { createSpendSeeder } from '../../src/metering/spend-seeder.js';
import { createTokenCounter } from '../../src/metering/token-counter.js';
import type { GatewayCall } from '../../src/pipeline/stage.js';
import { DEFAULT_ORG_SETTINGS, type AuthContext, type Budget } from '../../src/tenancy/tenancy-types.js';

let sequence = 0;

/** A caller of its own org (ids unique within the test process), with an optional key budget. */
export function testAuth(options: { orgId?: string; keyBudget?: Budget; allowUnpriced?: boolean } = {}): AuthContext {
  const orgId = options.orgId ?? `org-${++sequence}`;
  return {
    org: {
      id: orgId, name: orgId, tier: 'tier1', customLimits: {}, enabledModels: null, budget: null,
      settings: { ...DEFAULT_ORG_SETTINGS, allowUnpricedModels: options.allowUnpriced ?? false }, createdAt: 0,
    },
    team: null,
    key: {
      id: `key-${orgId}`, orgId, teamId: null, name: 'k', alias: 'sk-...abcd', role: 'inference', status: 'active',
      budget: options.keyBudget ?? null, userBudget: null, limits: {}, userLimits: null, allowedModels: null, createdAt: 0, lastUsedAt: null, revokedAt: null,
    },
  };
}

/**
 * A non-stream chat call for `model` (request and call alike) asking for 50 output tokens; `body`
 * is merged into the request, `overrides` into the call (so `{ model }` there changes the call's
 * model alone).
 */
export function testChatCall(
  context: AuthContext,
  options: { body?: Record<string, unknown>; model?: string; overrides?: Partial<GatewayCall> } = {},
): GatewayCall {
  const model = options.model ?? 'test-chat';
  return {
    requestId: `req-${++sequence}`,
    operation: 'chat',
    auth: context,
    model,
    request: { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 50, ...options.body },
    stream: false,
    includeUsage: false,
    user: undefined,
    signal: new AbortController().signal,
    startedAt: 0,
    record: { headers: {} },
    ...options.overrides,
  };
}

export interface MeterHarness {
  readonly database: DatabaseHandle;
  readonly pricing: PricingCatalog;
  /** The stage over `gate` (a fresh in-memory gate by default) and a ledger `wrapLedger` may replace. */
  setup(gate?: SpendGate, wrapLedger?: (ledger: SpendLedger) => SpendLedger): MeterSetup;
  close(): Promise<void>;
}

export interface MeterSetup {
  gate: SpendGate;
  ledger: SpendLedger;
  stage: ReturnType<typeof createMeterStage>;
  credits: ReturnType<typeof createOrgCredits>;
  /** Every event the stage published. */
  published: GatewayEvent[];
  /** The context of every error the stage reported. */
  errors: string[];
}

/** A migrated in-memory SQLite database and a price catalog over `prices`. */
export async function createMeterHarness(prices: Record<string, ModelPrice>): Promise<MeterHarness> {
  const database = await createDatabase('sqlite::memory:');
  await migrateToLatest(database.db);
  const db = database.db;
  const pricing = await createPricingCatalog({ db, defaults: prices });
  const ledgers: SpendLedger[] = [];
  return {
    database,
    pricing,
    setup(gateOverride, wrapLedger) {
      const gate = gateOverride ?? createMemorySpendGate({ sweepIntervalMs: 0 });
      const ledger = createSqlSpendLedger({ db, intervalMs: 10_000 });
      ledgers.push(ledger);
      const seeder = createSpendSeeder({ gate, ledger });
      const events = createEventBus();
      const published: GatewayEvent[] = [];
      events.subscribe((event) => published.push(event));
      const errors: string[] = [];
      const stage = createMeterStage({
        pricing,
        gate,
        seeder,
        ledger: wrapLedger ? wrapLedger(ledger) : ledger,
        events,
        tokens: createTokenCounter(),
        onError: (_error, context) => void errors.push(context),
      });
      const credits = createOrgCredits({ db, gate, seeder });
      return { gate, ledger, stage, credits, published, errors };
    },
    async close() {
      for (const ledger of ledgers) await ledger.close();
      await database.close();
    },
  };
}
