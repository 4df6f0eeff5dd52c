import type { BulkInsert } from '../db/bulk-insert.js';
import type { Kysely } from 'kysely';
import type { Redis } from 'ioredis';
import type { Database } from '../db/schema.js';
import type { ChangeFeed } from '../lib/change-feed.js';
import type { EventBus } from '../lib/event-bus.js';
import type { Stage } from '../pipeline/stage.js';
import type { CounterStore } from '../ratelimit/counter-store.js';
import { createMemoryCounterStore } from '../ratelimit/memory-counter-store.js';
import { createRateLimitStage } from '../ratelimit/rate-limit-stage.js';
import { createRedisCounterStore } from '../ratelimit/redis-counter-store.js';
import type { Deployment } from '../routing/catalog-types.js';
import type { ModelCatalog } from '../routing/model-catalog.js';
import { DEFAULT_PRICES } from './default-prices.js';
import type { EstimateLimits } from './estimate-usage.js';
import { createMemorySpendGate } from './memory-spend-gate.js';
import { createAllowanceSpendGate } from './allowance-spend-gate.js';
import { createAllowanceCounterStore } from '../ratelimit/allowance-counter-store.js';
import { createMeterStage } from './meter-stage.js';
import type { ModelPrice } from './model-price.js';
import { createOrgCredits, type OrgCredits } from './org-credits.js';
import { createPricingCatalog, type PricingCatalog } from './pricing-catalog.js';
import { createRedisSpendGate } from './redis-spend-gate.js';
import type { SpendGate } from './spend-gate.js';
import { createSqlSpendLedger, type SpendLedger } from './spend-ledger.js';
import { createSettlementRetry, type SettlementRetry } from './settlement-retry.js';
import { createCounterRepairs } from './counter-repairs.js';
import { createSpendSeeder, seedingGate, type SpendSeeder } from './spend-seeder.js';
import { createThresholdNotifier } from './budget-thresholds.js';
import { createTokenCounter, type TokenCounter } from './token-counter.js';

/** How often an instance looks for spend counters another instance marked for repair (counter-repairs.ts). */
const REPAIR_INTERVAL_MS = 30_000;

export interface MeteringOptions {
  db: Kysely<Database>;
  /** Batched appends for the spend ledger (off the event loop for SQLite). */
  bulkInsert?: BulkInsert;
  /** Shared counters for several instances; in-process when absent. */
  redis?: Redis;
  /** Key prefix in Redis (tests use a unique one). */
  redisPrefix?: string;
  events: EventBus;
  changes?: ChangeFeed;
  catalog?: ModelCatalog;
  /** Built-in models with their prices (providers/local LOCAL_MODELS). */
  builtinModels?: ReadonlyArray<{ id: string; price: ModelPrice }>;
  fileOverrides?: Readonly<Record<string, ModelPrice>>;
  /** Charge calls to org credit balances (default true). */
  credits?: boolean;
  limits?: Partial<EstimateLimits>;
  ledgerFlushIntervalMs?: number;
  ledgerBatchSize?: number;
  /**
   * With Redis: an instance holds room in rate-limit windows and credit for several calls at once,
   * at most 1/share of a limit or of an account's remainder (allowance-counter-store.ts,
   * allowance-spend-gate.ts). 0 or absent: every call asks Redis.
   */
  allowanceShare?: number;
  /** Longest a call may hold credits before the sweeper releases them; keep above the request time cap. */
  reservationTtlMs?: number;
  onError?: (error: unknown, context: string) => void;
}

/** Everything metering and rate limiting need, built once; app.ts places the two stages in the pipelines. */
export interface Metering {
  pricing: PricingCatalog;
  gate: SpendGate;
  counters: CounterStore;
  ledger: SpendLedger;
  /** Settlements and releases that failed while the spend store was away, replayed when it is back. */
  settlementRetry: SettlementRetry;
  seeder: SpendSeeder;
  credits: OrgCredits;
  tokens: TokenCounter;
  meterStage: Stage;
  rateLimitStage: Stage;
  close(): Promise<void>;
}

export async function createMetering(options: MeteringOptions): Promise<Metering> {
  const report = options.onError ?? (() => {});
  const defaults: Record<string, ModelPrice> = { ...DEFAULT_PRICES };
  for (const model of options.builtinModels ?? []) defaults[model.id] = model.price;
  const pricing = await createPricingCatalog({
    db: options.db,
    defaults,
    fileOverrides: options.fileOverrides,
    changes: options.changes,
    onError: (error) => report(error, 'pricing reload failed'),
  });
  const prefix = options.redisPrefix ?? 'gw:';
  const share = options.redis ? (options.allowanceShare ?? 0) : 0;
  const sharedGate = options.redis
    ? createRedisSpendGate({ redis: options.redis, prefix: `${prefix}spend:`, onError: (error) => report(error, 'reservation sweep failed') })
    : createMemorySpendGate();
  const sharedCounters = options.redis ? createRedisCounterStore({ redis: options.redis, prefix: `${prefix}rl:` }) : createMemoryCounterStore();
  let gate: SpendGate = sharedGate;
  let counters: CounterStore = sharedCounters;
  if (options.redis && share > 0) {
    const redis = options.redis;
    const available = () => redis.status === 'ready';
    const allowanceGate = createAllowanceSpendGate(sharedGate, { share, available, onError: (error) => report(error, 'credit claim release failed') });
    const allowanceCounters = createAllowanceCounterStore(sharedCounters, { share, available, onError: (error) => report(error, 'rate-limit allowance return failed') });
    // Redis may come back without what was claimed (a restart): claims start over on every reconnection.
    redis.on('close', () => {
      allowanceGate.forget();
      allowanceCounters.forget();
    });
    gate = allowanceGate;
    counters = allowanceCounters;
  }
  const ledger = createSqlSpendLedger({
    db: options.db,
    bulkInsert: options.bulkInsert,
    intervalMs: options.ledgerFlushIntervalMs,
    batchSize: options.ledgerBatchSize,
    onError: (error) => report(error, 'spend ledger write failed; will retry'),
  });
  const seeder = createSpendSeeder({ gate, ledger });
  // Counters Redis lost (or that were marked for re-seeding) are seeded from SQL on first use.
  gate = seedingGate(gate, seeder);
  // Redis may come back empty (a restart without persistence): seed every account again on first use.
  options.redis?.on('close', () => seeder.forget());
  // Budget threshold events of settlements replayed after an outage (the meter stage checks the others).
  const thresholds = createThresholdNotifier({ gate, events: options.events });
  // Counters that miss costs another instance could not settle before it stopped (Redis away).
  const repairs = options.redis ? createCounterRepairs({ db: options.db, gate }) : undefined;
  const settlementRetry = createSettlementRetry({
    gate,
    onError: report,
    onLost: repairs && ((lost) => repairs.record(lost.flatMap((write) => write.accounts.map((account) => account.key)))),
    onSettled: async (write, settled) => {
      try {
        await thresholds.check(write.accounts, settled, write.actualNanos, write.context ?? { keyAlias: '', requestId: write.reservationId, model: '' });
      } catch (error) {
        report(error, 'budget threshold check failed');
      }
    },
  });
  // Repairs recorded by any instance are applied once Redis answers: at start, on every
  // reconnection, and every REPAIR_INTERVAL_MS (the instance that recorded them may never start again).
  let repairing: Promise<unknown> | undefined;
  const applyRepairs = () => {
    if (!repairs || repairing || options.redis?.status !== 'ready') return;
    repairing = repairs
      .apply()
      .catch((error) => report(error, 'spend counter repair failed; will retry'))
      .finally(() => (repairing = undefined));
  };
  const repairTimer = repairs ? setInterval(applyRepairs, REPAIR_INTERVAL_MS) : undefined;
  repairTimer?.unref();
  options.redis?.on('ready', applyRepairs);
  applyRepairs();
  const credits = createOrgCredits({ db: options.db, gate, seeder });
  const tokens = createTokenCounter();

  // Deployment lookups by id for settlement prices; rebuilt lazily after catalog changes.
  let deploymentsById: Map<string, Deployment> | undefined;
  const unsubscribe = options.changes?.subscribe((notice) => {
    if (notice.kind === 'catalog' || notice.kind === 'all') deploymentsById = undefined;
    // A budget removed and set again must count the spend made in between: seed it again from SQL.
    if (notice.kind === 'org' || notice.kind === 'team' || notice.kind === 'key') {
      seeder.ownerChanged(notice.kind, notice.id).catch((error) => report(error, 'budget counter re-seeding failed'));
    }
  });
  const catalog = options.catalog;
  const findDeployment = catalog
    ? (deploymentId: string) => {
        if (!deploymentsById?.has(deploymentId)) {
          deploymentsById = new Map(catalog.list().flatMap((route) => route.deployments.map((deployment) => [deployment.id, deployment] as const)));
        }
        return deploymentsById.get(deploymentId);
      }
    : undefined;

  const meterStage = createMeterStage({
    pricing,
    gate,
    seeder,
    ledger,
    events: options.events,
    tokens,
    deploymentsOf: catalog ? (modelId) => catalog.get(modelId)?.deployments : undefined,
    findDeployment,
    credits: options.credits,
    limits: options.limits,
    reservationTtlMs: options.reservationTtlMs,
    onError: report,
    deferGateWrite: (write) => settlementRetry.defer(write),
  });
  const rateLimitStage = createRateLimitStage({
    store: counters,
    tokens,
    onError: (error) => report(error, 'rate-limit store failed; call let through'),
    maxOutputTokensOf: (model, orgId) => pricing.priceFor(model, orgId)?.maxOutputTokens,
  });

  return {
    pricing,
    gate,
    counters,
    ledger,
    settlementRetry,
    seeder,
    credits,
    tokens,
    meterStage,
    rateLimitStage,
    async close() {
      unsubscribe?.();
      pricing.close();
      if (repairTimer) clearInterval(repairTimer);
      options.redis?.off('ready', applyRepairs);
      await repairing;
      // The ledger first: a counter marked for repair is seeded from it, so the costs must be there.
      await ledger.close();
      await settlementRetry.close();
      await gate.close();
      await counters.close();
    },
  };
}
