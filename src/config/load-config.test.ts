import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from './load-config.js';
import { defaultBatchFlushIntervalMs } from '../db/create-database.js';

test('GW_SQLITE_WRITER: auto by default, thread or inline when set, and a bad value names the variable', () => {
  assert.equal(loadConfig({}).sqliteWriter, 'auto');
  assert.equal(loadConfig({ GW_SQLITE_WRITER: 'inline' }).sqliteWriter, 'inline');
  assert.equal(loadConfig({ GW_SQLITE_WRITER: 'thread' }).sqliteWriter, 'thread');
  assert.throws(() => loadConfig({ GW_SQLITE_WRITER: 'sometimes' }), /GW_SQLITE_WRITER/);
});

test('GW_SQLITE_CACHE_KIB: 2 MiB by default, a number when set, and below 256 KiB names the variable', () => {
  assert.equal(loadConfig({}).sqliteCacheKib, 2048);
  assert.equal(loadConfig({ GW_SQLITE_CACHE_KIB: '8192' }).sqliteCacheKib, 8192);
  assert.throws(() => loadConfig({ GW_SQLITE_CACHE_KIB: '16' }), /GW_SQLITE_CACHE_KIB/);
});

test('GW_REQUEST_LOG_RETENTION_DAYS: 90 by default, 0 keeps the log for ever, and a negative or non-whole value names the variable', () => {
  assert.equal(loadConfig({}).requestLogRetentionDays, 90);
  assert.equal(loadConfig({ GW_REQUEST_LOG_RETENTION_DAYS: '0' }).requestLogRetentionDays, 0);
  assert.equal(loadConfig({ GW_REQUEST_LOG_RETENTION_DAYS: '7' }).requestLogRetentionDays, 7);
  assert.throws(() => loadConfig({ GW_REQUEST_LOG_RETENTION_DAYS: '-1' }), /GW_REQUEST_LOG_RETENTION_DAYS/);
  assert.throws(() => loadConfig({ GW_REQUEST_LOG_RETENTION_DAYS: 'a week' }), /GW_REQUEST_LOG_RETENTION_DAYS/);
});

test('GW_LOG_FLUSH_INTERVAL_MS: unset, each database gets its own window (1 s on SQLite, 200 ms on Postgres); set, it applies as given', () => {
  assert.equal(loadConfig({}).logFlushIntervalMs, undefined);
  assert.equal(defaultBatchFlushIntervalMs('sqlite'), 1000);
  assert.equal(defaultBatchFlushIntervalMs('postgres'), 200);
  assert.equal(loadConfig({ GW_LOG_FLUSH_INTERVAL_MS: '750' }).logFlushIntervalMs, 750);
  assert.throws(() => loadConfig({ GW_LOG_FLUSH_INTERVAL_MS: '5' }), /GW_LOG_FLUSH_INTERVAL_MS/);
});

test('GW_DATA_DIR also places the embedded database unless GW_DATABASE_URL says otherwise', () => {
  assert.equal(loadConfig({}).databaseUrl, 'sqlite:./data/gw.db');
  assert.equal(loadConfig({ GW_DATA_DIR: '/var/lib/gw' }).databaseUrl, 'sqlite:/var/lib/gw/gw.db');
  assert.equal(loadConfig({ GW_DATA_DIR: '/var/lib/gw', GW_DATABASE_URL: 'postgres://db/gw' }).databaseUrl, 'postgres://db/gw');
  assert.equal(loadConfig({ GW_DATA_DIR: '/var/lib/gw', GW_DATABASE_URL: 'sqlite:/elsewhere/gw.db' }).databaseUrl, 'sqlite:/elsewhere/gw.db');
});

test('GW_ADMISSION_OVERLAP: on by default, off with false / 0 / no / off', () => {
  assert.equal(loadConfig({}).admissionOverlap, true);
  for (const value of ['false', '0', 'no', 'off', 'FALSE']) assert.equal(loadConfig({ GW_ADMISSION_OVERLAP: value }).admissionOverlap, false, value);
  assert.equal(loadConfig({ GW_ADMISSION_OVERLAP: 'true' }).admissionOverlap, true);
});

test('GW_CHANGE_FRESHNESS_MS and GW_ALLOWANCE_SHARE: defaults, 0 turns each off, bad values name the variable', () => {
  assert.equal(loadConfig({}).changeFreshnessMs, 100);
  assert.equal(loadConfig({}).allowanceShare, 32);
  assert.equal(loadConfig({ GW_CHANGE_FRESHNESS_MS: '0', GW_ALLOWANCE_SHARE: '0' }).changeFreshnessMs, 0);
  assert.equal(loadConfig({ GW_ALLOWANCE_SHARE: '0' }).allowanceShare, 0);
  assert.throws(() => loadConfig({ GW_CHANGE_FRESHNESS_MS: '-1' }), /GW_CHANGE_FRESHNESS_MS/);
  assert.throws(() => loadConfig({ GW_ALLOWANCE_SHARE: 'many' }), /GW_ALLOWANCE_SHARE/);
});

test('GW_UPSTREAM_POLL_US: 500 µs by default, 0 turns it off, a bad value names the variable', () => {
  assert.equal(loadConfig({}).upstreamPollUs, 500);
  assert.equal(loadConfig({ GW_UPSTREAM_POLL_US: '0' }).upstreamPollUs, 0);
  assert.equal(loadConfig({ GW_UPSTREAM_POLL_US: '2000' }).upstreamPollUs, 2000);
  assert.throws(() => loadConfig({ GW_UPSTREAM_POLL_US: '-1' }), /GW_UPSTREAM_POLL_US/);
  assert.throws(() => loadConfig({ GW_UPSTREAM_POLL_US: 'soon' }), /GW_UPSTREAM_POLL_US/);
});

test('GW_UPSTREAM_CLIENT: http1 by default, undici on request, anything else names the variable', () => {
  assert.equal(loadConfig({}).upstreamClient, 'http1');
  assert.equal(loadConfig({ GW_UPSTREAM_CLIENT: 'undici' }).upstreamClient, 'undici');
  assert.throws(() => loadConfig({ GW_UPSTREAM_CLIENT: 'curl' }), /GW_UPSTREAM_CLIENT/);
});

test('GW_CACHE_REDIS_URL: unset by default (the cache follows GW_REDIS_URL), a URL when set', () => {
  assert.equal(loadConfig({}).cacheRedisUrl, undefined);
  assert.equal(loadConfig({ GW_REDIS_URL: 'redis://shared:6379', GW_CACHE_REDIS_URL: 'redis://cache:6379/1' }).cacheRedisUrl, 'redis://cache:6379/1');
});
