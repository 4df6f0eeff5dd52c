import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { createDatabase, type DatabaseHandle } from '../db/create-database.js';
import { migrateToLatest } from '../db/migrate.js';
import { createMemorySpendGate } from '../metering/memory-spend-gate.js';
import { createRedisSpendGate } from '../metering/redis-spend-gate.js';
import { creditAccount } from '../metering/spend-accounts.js';
import type { SpendAccount, SpendGate } from '../metering/spend-gate.js';
import { createSqlSpendLedger, type SpendLedger } from '../metering/spend-ledger.js';
import { createSpendSeeder, seedingGate, type SpendSeeder } from '../metering/spend-seeder.js';
import { REDIS_SKIP, TEST_DATABASES, testRedisConnections } from '../../test/helpers/test-databases.js';
import { createVideoRefunds, refundRequestId, type VideoRefundsOptions } from './video-refunds.js';
import { createSqlVideoStore, type VideoJob, type VideoStore } from './video-store.js';

const ORG = 'org-1';
const KEY = 'key-1';
const COST = 800_000_000;
const CREDITED = 10_000_000_000;
const CREATED = Date.UTC(2026, 10, 20, 12);

const keyBudget: SpendAccount = {
  key: `key:${KEY}:all`,
  kind: 'key',
  limitNanos: 5_000_000_000,
  expiresAt: 0,
  orgId: ORG,
  ownerId: KEY,
  period: 'none',
  periodStartMs: 0,
  thresholds: [1],
};
const ACCOUNTS = [creditAccount(ORG), keyBudget];

const opened: DatabaseHandle[] = [];
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers) await close();
  for (const handle of opened) await handle.close();
});

const redisConnection = testRedisConnections();

/**
 * Where the counters live. A restart of the embedded gateway loses its counters and markers (they
 * are seeded again from SQL); with Redis they outlive it.
 */
const COUNTER_STORES: Array<{ name: string; skip: string | false; counters(): () => SpendGate }> = [
  { name: 'embedded counters', skip: false, counters: () => () => createMemorySpendGate({ sweepIntervalMs: 0 }) },
  {
    name: 'Redis counters',
    skip: REDIS_SKIP,
    counters() {
      const prefix = `gwtest:${randomUUID()}:`;
      const redis = redisConnection();
      return () => createRedisSpendGate({ redis, prefix, sweepIntervalMs: 0 });
    },
  },
];

/** What one gateway process holds: its gate (in memory, or a client of Redis), its seeder and its ledger writer. A restart makes new ones. */
interface Process {
  gate: SpendGate;
  seeder: SpendSeeder;
  ledger: SpendLedger;
}

function startGatewayProcess(handle: DatabaseHandle, counters: () => SpendGate): Process {
  const ledger = createSqlSpendLedger({ db: handle.db, intervalMs: 60_000 });
  const raw = counters();
  const seeder = createSpendSeeder({ gate: raw, ledger });
  closers.push(() => ledger.close(), () => raw.close());
  return { gate: seedingGate(raw, seeder), seeder, ledger };
}

async function spentOn(process: Process, account: SpendAccount): Promise<number> {
  await process.seeder.ensure([account]);
  return (await process.gate.read(account.key)).spentNanos;
}

async function ledgerTotal(handle: DatabaseHandle): Promise<number> {
  const row = await handle.db.selectFrom('spend_ledger').select((builder) => builder.fn.sum<number>('cost_nanos').as('total')).where('org_id', '=', ORG).executeTakeFirst();
  return Number(row?.total ?? 0);
}

for (const database of TEST_DATABASES) for (const counterStore of COUNTER_STORES) {
  describe(`video refunds: ${database.name}, ${counterStore.name}`, { skip: database.skip || counterStore.skip }, () => {
    let serial = 0;

    /** A fresh database and counter store, with the org's credit topped up. */
    async function open(): Promise<{ handle: DatabaseHandle; store: VideoStore; startProcess(): Process }> {
      const handle = await createDatabase(await database.create());
      opened.push(handle);
      await migrateToLatest(handle.db);
      await handle.db.insertInto('credit_transactions').values({ id: 'topup-1', org_id: ORG, amount_nanos: CREDITED, kind: 'topup', note: null, created_at: CREATED }).execute();
      const counters = counterStore.counters();
      return { handle, store: createSqlVideoStore(handle.db), startProcess: () => startGatewayProcess(handle, counters) };
    }

    /** A failed job whose creation the meter charged, as it does: hold, settle, ledger entry. */
    async function chargedFailedJob(store: VideoStore, process: Process, options: { flush?: boolean; cost?: number } = {}): Promise<VideoJob> {
      const cost = options.cost ?? COST;
      serial += 1;
      const requestId = `req-video-${serial}`;
      await process.seeder.ensure(ACCOUNTS);
      assert.deepEqual(await process.gate.reserve(requestId, ACCOUNTS, 1_200_000_000, 60_000), { ok: true });
      await process.gate.settle(requestId, ACCOUNTS, cost);
      process.ledger.record({
        requestId,
        orgId: ORG,
        keyId: KEY,
        keyAlias: 'sk-...abcd',
        teamId: null,
        user: null,
        model: 'sora',
        operation: 'video',
        units: { videoSeconds: 8 },
        costNanos: cost,
        unpriced: false,
        createdAt: CREATED,
      });
      if (options.flush !== false) await process.ledger.flush();
      return insertFailedJob(store, requestId, JSON.stringify(ACCOUNTS));
    }

    async function insertFailedJob(store: VideoStore, requestId: string | null, accounts: string | null, createdAt = CREATED): Promise<VideoJob> {
      const job: VideoJob = {
        id: `video_${serial}_${Math.random().toString(36).slice(2)}`,
        org_id: ORG,
        key_id: KEY,
        model: 'sora',
        deployment_id: 'deployment',
        provider: 'openai',
        upstream_job_id: 'upstream',
        status: 'failed',
        progress: 0,
        prompt: 'waves',
        seconds: 8,
        size: '720x1280',
        error: JSON.stringify({ code: 'video_failed', message: 'failed upstream' }),
        created_at: createdAt,
        completed_at: createdAt + 1000,
        updated_at: createdAt + 1000,
        request_id: requestId,
        spend_accounts: accounts,
        refunded_at: null,
        refund_nanos: null,
      };
      await store.insert(job);
      return job;
    }

    function refundsOf(handle: DatabaseHandle, store: VideoStore, process: Process, overrides: Partial<VideoRefundsOptions> = {}) {
      return createVideoRefunds({
        db: handle.db,
        store,
        gate: process.gate,
        seeder: process.seeder,
        flushLedger: () => process.ledger.flush(),
        now: () => CREATED + 60_000,
        ...overrides,
      });
    }

    test('a failed job is refunded once: an entry of the opposite amount in the charge’s period, the counters, the job marked', async () => {
      const { handle, store, startProcess } = await open();
      const process = startProcess();
      const job = await chargedFailedJob(store, process);
      assert.equal(await spentOn(process, keyBudget), COST);
      assert.deepEqual((await store.listRefundsOwed(10)).map((owed) => owed.id), [job.id]);

      const refunds = refundsOf(handle, store, process);
      assert.deepEqual(await refunds.refund(job), { kind: 'refunded', nanos: COST });
      assert.equal(await spentOn(process, keyBudget), 0);
      assert.equal(await spentOn(process, creditAccount(ORG)), 0);
      assert.equal(await ledgerTotal(handle), 0);
      const entry = await handle.db.selectFrom('spend_ledger').selectAll().where('request_id', '=', refundRequestId(job.request_id!)).executeTakeFirstOrThrow();
      assert.equal(Number(entry.cost_nanos), -COST);
      assert.equal(Number(entry.created_at), CREATED, 'dated at the charge, so it falls in the same day and budget period');
      assert.deepEqual(JSON.parse(entry.units), { refundOf: job.request_id });
      const marked = await store.get(job.id);
      assert.equal(Number(marked?.refund_nanos), COST);
      assert.notEqual(marked?.refunded_at, null);
      assert.deepEqual(await store.listRefundsOwed(10), []);

      // Asked again (a stale copy of the job, a second instance): nothing more is given back.
      await refunds.refund(job);
      assert.equal(await spentOn(process, keyBudget), 0);
      assert.equal(await ledgerTotal(handle), 0);
      const entries = await handle.db.selectFrom('spend_ledger').select('request_id').where('org_id', '=', ORG).execute();
      assert.equal(entries.length, 2);
    });

    test('the counters changed but the entry not written (the process died): a retry, and a restart, give back exactly once', async () => {
      for (const restart of [false, true]) {
        const { handle, store, startProcess } = await open();
        const process = startProcess();
        const job = await chargedFailedJob(store, process);
        // The refund's counter change lands, then the attempt dies before the ledger entry.
        const dying: SpendGate = {
          ...process.gate,
          async settle(...args) {
            await process.gate.settle(...args);
            throw new Error('process died');
          },
        };
        await assert.rejects(refundsOf(handle, store, process, { gate: dying }).refund(job), /process died/);
        assert.equal(await spentOn(process, keyBudget), 0, 'the counter was given back; the ledger does not know yet');
        assert.equal(await ledgerTotal(handle), COST);

        const next = restart ? startProcess() : process;
        const [owed] = await store.listRefundsOwed(10);
        assert.deepEqual(await refundsOf(handle, store, next).refund(owed), { kind: 'refunded', nanos: COST });
        assert.equal(await ledgerTotal(handle), 0);
        assert.equal(await spentOn(next, keyBudget), 0, `${restart ? 'after a restart' : 'on a retry'}: given back once, not twice`);
        assert.equal(await spentOn(next, creditAccount(ORG)), 0);
        assert.deepEqual(await store.listRefundsOwed(10), []);
      }
    });

    test('the counter store failed before changing anything, after the marker was taken: the retry reads the counters again from SQL', async () => {
      const { handle, store, startProcess } = await open();
      const process = startProcess();
      const job = await chargedFailedJob(store, process);
      const away: SpendGate = { ...process.gate, settle: async () => Promise.reject(new Error('spend store away')) };
      await assert.rejects(refundsOf(handle, store, process, { gate: away }).refund(job), /spend store away/);
      assert.equal(await spentOn(process, keyBudget), COST, 'nothing given back yet');

      const [owed] = await store.listRefundsOwed(10);
      assert.deepEqual(await refundsOf(handle, store, process).refund(owed), { kind: 'refunded', nanos: COST });
      assert.equal(await ledgerTotal(handle), 0);
      assert.equal(await spentOn(process, keyBudget), 0, 'the marker was taken, so the counters come from SQL, refund included');
      assert.equal(await spentOn(process, creditAccount(ORG)), 0);
    });

    test('the entry written but the job not marked: a retry and a restart only mark it', async () => {
      for (const restart of [false, true]) {
        const { handle, store, startProcess } = await open();
        const process = startProcess();
        const job = await chargedFailedJob(store, process);
        const forgetful: VideoStore = { ...store, markRefunded: async () => Promise.reject(new Error('database went away')) };
        await assert.rejects(refundsOf(handle, store, process, { store: forgetful }).refund(job), /database went away/);
        assert.equal(await ledgerTotal(handle), 0);

        const next = restart ? startProcess() : process;
        const [owed] = await store.listRefundsOwed(10);
        assert.equal(owed.id, job.id);
        await refundsOf(handle, store, next).refund(owed);
        assert.equal(await ledgerTotal(handle), 0);
        assert.equal(await spentOn(next, keyBudget), 0);
        assert.equal(await spentOn(next, creditAccount(ORG)), 0);
        assert.deepEqual(await store.listRefundsOwed(10), []);
      }
    });

    test('a charge still queued in this instance’s ledger is written first, then refunded', async () => {
      const { handle, store, startProcess } = await open();
      const process = startProcess();
      const job = await chargedFailedJob(store, process, { flush: false });
      assert.equal(await ledgerTotal(handle), 0, 'the charge is still queued');
      assert.deepEqual(await refundsOf(handle, store, process).refund(job), { kind: 'refunded', nanos: COST });
      assert.equal(await ledgerTotal(handle), 0);
      assert.equal(await spentOn(process, keyBudget), 0);
    });

    test('no charge in the ledger: owed while it may still arrive, then nothing is given back; jobs from before refunds are not listed', async () => {
      const { handle, store, startProcess } = await open();
      const process = startProcess();
      serial += 1;
      const job = await insertFailedJob(store, `req-never-charged-${serial}`, JSON.stringify(ACCOUNTS));
      const early = refundsOf(handle, store, process, { now: () => CREATED + 60_000, chargeGraceMs: 15 * 60_000 });
      assert.deepEqual(await early.refund(job), { kind: 'charge_pending' });
      assert.equal((await store.listRefundsOwed(10)).length, 1);

      const late = refundsOf(handle, store, process, { now: () => CREATED + 16 * 60_000, chargeGraceMs: 15 * 60_000 });
      assert.deepEqual(await late.refund(job), { kind: 'charge_missing' });
      assert.deepEqual(await store.listRefundsOwed(10), []);
      assert.equal(Number((await store.get(job.id))?.refund_nanos), 0);
      assert.equal(await ledgerTotal(handle), 0);
      assert.equal(await spentOn(process, keyBudget), 0);

      await insertFailedJob(store, null, null);
      assert.deepEqual(await store.listRefundsOwed(10), [], 'a job made before refunds has no charge to find');
    });

    test('a creation that cost nothing closes its refund with nothing given back', async () => {
      const { handle, store, startProcess } = await open();
      const process = startProcess();
      const job = await chargedFailedJob(store, process, { cost: 0 });
      assert.deepEqual(await refundsOf(handle, store, process).refund(job), { kind: 'nothing_charged' });
      assert.deepEqual(await store.listRefundsOwed(10), []);
      const entries = await handle.db.selectFrom('spend_ledger').select('request_id').where('org_id', '=', ORG).execute();
      assert.deepEqual(entries.map((entry) => entry.request_id), [job.request_id], 'no refund entry');
    });
  });
}
