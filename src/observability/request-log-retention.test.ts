import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createDatabase, type DatabaseHandle } from '../db/create-database.js';
import { migrateToLatest } from '../db/migrate.js';
import { randomUUID } from 'node:crypto';
import type { RequestLogTable } from '../db/schema.js';
import type { GuardrailLogsTable } from '../guardrails/guardrail-tables.js';
import { timeOrderedIdFloor } from '../lib/ids.js';
import { TEST_DATABASES } from '../../test/helpers/test-databases.js';
import { startRequestLogRetention, type RequestLogRetentionOptions } from './request-log-retention.js';

const DAY_MS = 86_400_000;
const NOW = Date.UTC(2026, 10, 25, 12);

const opened: DatabaseHandle[] = [];
after(async () => {
  for (const handle of opened) await handle.close();
});

let serial = 0;
/** A request-log row written at `createdAt`, its id as the recorder makes them (time-ordered) unless given. */
function row(createdAt: number, id?: string): RequestLogTable {
  serial += 1;
  return {
    id: id ?? `${timeOrderedIdFloor(createdAt)}7000-8000-${String(serial).padStart(12, '0')}`,
    request_id: `req-${serial}`,
    org_id: 'org',
    key_id: 'key',
    key_alias: 'alias',
    team_id: null,
    user: null,
    model: 'gpt-4o-mini',
    operation: 'chat',
    status: 200,
    error_code: null,
    latency_ms: 1.5,
    prompt_tokens: 3,
    completion_tokens: 4,
    cost_nanos: 10,
    deployment_id: null,
    attempts: 1,
    cache: null,
    stream: 0,
    details: null,
    created_at: createdAt,
  };
}

/** A guardrail-log row of `orgId` written at `createdAt`, with a random id as older versions wrote them. */
function guardrailRow(orgId: string, createdAt: number): GuardrailLogsTable {
  serial += 1;
  return {
    id: randomUUID(),
    org_id: orgId,
    guardrail_id: 'guardrail',
    guardrail_name: 'pii',
    kind: 'pii',
    stage: 'pre',
    action: 'redacted',
    request_id: `req-${serial}`,
    key_id: 'key',
    key_alias: null,
    model: 'gpt-4o-mini',
    finding_types: '["email"]',
    reason: null,
    created_at: createdAt,
  };
}

async function remainingGuardrailLog(handle: DatabaseHandle): Promise<string[]> {
  const rows = await handle.db.selectFrom('guardrail_logs').select('request_id').orderBy('request_id').execute();
  return rows.map((each) => each.request_id);
}

async function remainingIds(handle: DatabaseHandle): Promise<string[]> {
  const rows = await handle.db.selectFrom('request_log').select('request_id').orderBy('request_id').execute();
  return rows.map((each) => each.request_id);
}

for (const database of TEST_DATABASES) {
  describe(`request log retention: ${database.name}`, { skip: database.skip }, () => {
    async function open(): Promise<DatabaseHandle> {
      const handle = await createDatabase(await database.create());
      opened.push(handle);
      await migrateToLatest(handle.db);
      return handle;
    }
    const retention = (handle: DatabaseHandle, overrides: Partial<RequestLogRetentionOptions> = {}) =>
      startRequestLogRetention({ db: handle.db, retentionDays: 30, instanceId: 'one', now: () => NOW, batchRows: 7, pauseMs: 0, firstRoundDelayMs: 3_600_000, ...overrides });

    test('rows older than the retention are deleted, batch after batch; newer ones stay', async () => {
      const handle = await open();
      const old = Array.from({ length: 30 }, (_, index) => row(NOW - 31 * DAY_MS - index * 60_000));
      const kept = Array.from({ length: 10 }, (_, index) => row(NOW - 29 * DAY_MS + index * 60_000));
      await handle.db.insertInto('request_log').values([...old, ...kept]).execute();
      let reported = 0;
      const pruner = retention(handle, { onPruned: (rows) => (reported = rows) });
      assert.equal(await pruner.pruneOnce(), 30);
      assert.equal(reported, 30);
      assert.deepEqual(await remainingIds(handle), kept.map((each) => each.request_id).sort());
      assert.equal(await pruner.pruneOnce(), 0, 'nothing left to prune');
      await pruner.stop();
    });

    test('a recent row whose id is not time-ordered is never deleted, however low its id sorts', async () => {
      const handle = await open();
      const recent = row(NOW - DAY_MS, '00000000-0000-4000-8000-000000000001');
      const old = row(NOW - 40 * DAY_MS);
      await handle.db.insertInto('request_log').values([recent, old]).execute();
      const pruner = retention(handle);
      assert.equal(await pruner.pruneOnce(), 1);
      assert.deepEqual(await remainingIds(handle), [recent.request_id]);
      await pruner.stop();
    });

    test('the guardrail log is kept to the same retention, org by org, whatever its ids', async () => {
      const handle = await open();
      const org = (id: string) => ({ id, name: id, tier: 'free', custom_limits: '{}', enabled_models: null, budget: null, settings: '{}', created_at: NOW - 400 * DAY_MS });
      await handle.db.insertInto('orgs').values([org('org-a'), org('org-b')]).execute();
      const old = [
        ...Array.from({ length: 9 }, (_, index) => guardrailRow('org-a', NOW - 31 * DAY_MS - index)),
        ...Array.from({ length: 8 }, (_, index) => guardrailRow('org-b', NOW - 45 * DAY_MS - index)),
      ];
      const kept = [guardrailRow('org-a', NOW - 29 * DAY_MS), guardrailRow('org-b', NOW - DAY_MS)];
      await handle.db.insertInto('guardrail_logs').values([...old, ...kept]).execute();
      await handle.db.insertInto('request_log').values([row(NOW - 31 * DAY_MS)]).execute();
      const pruner = retention(handle);
      assert.equal(await pruner.pruneOnce(), old.length + 1);
      assert.deepEqual(await remainingGuardrailLog(handle), kept.map((each) => each.request_id).sort());
      assert.deepEqual(await remainingIds(handle), []);
      await pruner.stop();
    });

    test('retention 0 keeps every row; only the instance holding the lease prunes', async () => {
      const handle = await open();
      await handle.db.insertInto('request_log').values([row(NOW - 400 * DAY_MS), row(NOW - 100 * DAY_MS)]).execute();
      const forever = retention(handle, { retentionDays: 0 });
      assert.equal(await forever.pruneOnce(), 0);
      const first = retention(handle, { instanceId: 'first' });
      const second = retention(handle, { instanceId: 'second' });
      assert.equal(await first.pruneOnce(), 2);
      await handle.db.insertInto('request_log').values([row(NOW - 90 * DAY_MS)]).execute();
      assert.equal(await second.pruneOnce(), 0, 'the other instance holds the lease');
      assert.equal(await first.pruneOnce(), 1);
      await Promise.all([forever.stop(), first.stop(), second.stop()]);
    });
  });
}
